import type { Logger } from 'pino';
import type { Config } from '../../config.ts';
import { InProcessEventBus } from './in-process.ts';
import type { EventBus } from './port.ts';

/** Kafka when KAFKA_BROKERS is set (comma-separated host:port list), otherwise the in-process bus. */
export async function openEventBus(config: Pick<Config, 'KAFKA_BROKERS'>, logger: Logger): Promise<EventBus> {
  if (!config.KAFKA_BROKERS) return new InProcessEventBus(logger);
  // Loaded only when used, like the KurrentDB store: the embedded setup never loads kafkajs.
  const { KafkaEventBus } = await import('./kafka.ts');
  const brokers = config.KAFKA_BROKERS.split(',').map((broker) => broker.trim()).filter(Boolean);
  return KafkaEventBus.connect({ brokers, clientId: 'iam-service', logger: logger.child({ component: 'kafka' }) });
}
