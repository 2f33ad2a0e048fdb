import { ConfigError, loadConfig } from './config.ts';
import { cataloguedStore, publicEventData } from './event-catalogue.ts';
import { registerRelayMetrics } from './platform/bus/bus-metrics.ts';
import { EventRelay } from './platform/bus/relay.ts';
import { DataKeys } from './platform/crypto/data-keys.ts';
import { loadMasterKey } from './platform/crypto/master-key.ts';
import { SecretBox } from './platform/crypto/secret-box.ts';
import { openBus, openStorage } from './infrastructure.ts';
import { createLogger } from './platform/logging.ts';
import { serveMetrics } from './platform/metrics-server.ts';
import { createMetrics } from './platform/metrics.ts';
import { exitAfterFailedStart, stopOnSignal } from './platform/process-lifecycle.ts';

let closeStorage: (() => Promise<void>) | null = null;

/**
 * The relay as a process of its own (`npm run relay`), beside service instances started with
 * IAM_RELAY_ENABLED=false. Any number may run: the one holding the leader lock publishes, the
 * others stand by and take over when it dies.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  if (!config.KAFKA_BROKERS) {
    throw new ConfigError(['KAFKA_BROKERS: required by the relay process (the in-process bus exists only inside the service)']);
  }
  const logger = createLogger(config.LOG_LEVEL).child({ component: 'relay' });
  const storage = await openStorage(config, logger);
  closeStorage = () => storage.close();
  const pool = storage.pool;
  // The relay publishes personal fields in clear (docs/erasure.md): it reads through the data keys.
  const masterKey = await loadMasterKey({ configured: config.IAM_MASTER_KEY, dataDir: config.DATA_DIR, logger });
  const store = cataloguedStore(storage.store, new DataKeys(pool, new SecretBox(masterKey)));
  const bus = await openBus(config, logger);
  const topic = config.KAFKA_TOPIC;
  await bus.ensureTopic(topic, { partitions: config.KAFKA_TOPIC_PARTITIONS, replicationFactor: config.KAFKA_REPLICATION_FACTOR });
  const metrics = createMetrics();
  const relayMetrics = registerRelayMetrics(metrics, pool, store, topic);
  const relay = new EventRelay({ store, bus, database: pool.options, topic, publicData: publicEventData, logger, metrics: relayMetrics });
  relay.start();
  const metricsServer = config.IAM_RELAY_METRICS_PORT
    ? await serveMetrics(metrics.registry, config.IAM_RELAY_METRICS_PORT, config.HOST)
    : null;
  logger.info({ topic, metricsPort: config.IAM_RELAY_METRICS_PORT || null }, 'relay started');

  stopOnSignal(logger, async () => {
    // The batch in flight is published and checkpointed before the lock is released.
    await relay.stop();
    await bus.close();
    metricsServer?.close();
    await storage.close();
  });
}

main().catch((error: unknown) => exitAfterFailedStart(error, closeStorage));
