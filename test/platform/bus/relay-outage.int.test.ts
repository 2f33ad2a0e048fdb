import { afterAll, describe, expect, it, vi } from 'vitest';
import { registerRelayMetrics } from '../../../src/platform/bus/bus-metrics.ts';
import { readRelayCheckpoint } from '../../../src/platform/bus/relay-checkpoints.ts';
import { createMetrics } from '../../../src/platform/metrics.ts';
import { dedicatedBroker, openKafkaBus, whenKafkaReachable } from '../../support/kafka.ts';
import { appendRoundRobin, DELIVERY_TIMEOUT, effects, expectEachAppliedOnceInStreamOrder, newStreams, relayTestBed, uniqueTopic } from './relay-fixtures.ts';

// A broker of this file's own: stopping the shared one would break the other Kafka test files.
const broker = dedicatedBroker(10_000);
const RECOVERY_TIMEOUT = { timeout: 120_000, interval: 250 };

whenKafkaReachable(() =>
  describe('event relay through a broker outage', () => {
    // Registered first, so it runs after the bed has closed its bus.
    afterAll(() => broker.stop());
    const bed = relayTestBed(async () => {
      await broker.start();
      return openKafkaBus('relay-outage-test', broker.brokers);
    });

    it('keeps accepting appends while the broker is down; when it returns the relay catches up with nothing lost', async () => {
      const { db, store, bus } = bed;
      const topic = uniqueTopic('outage');
      await bus.ensureTopic(topic, { partitions: 3, replicationFactor: 1 });
      const { groupId } = await bed.consume(topic);
      const metrics = createMetrics();
      bed.startRelay(topic, { metrics: registerRelayMetrics(metrics, db.pool, store, topic) });
      const metric = async (name: string) => (await metrics.registry.getSingleMetric(name)!.get()).values[0]!.value;
      const streams = newStreams(3);
      const before = await appendRoundRobin(store, streams, 10);
      await vi.waitFor(async () => expectEachAppliedOnceInStreamOrder(await effects(db.pool, groupId), before), DELIVERY_TIMEOUT);
      // The last batch's checkpoint is written a little after its publish (no next batch carries it).
      await vi.waitFor(async () => expect(await metric('iam_relay_lag_events')).toBe(0), DELIVERY_TIMEOUT);
      const checkpointBefore = await readRelayCheckpoint(db.pool, topic);

      await broker.stop();
      const during = await appendRoundRobin(store, streams, 20);
      await vi.waitFor(async () => expect(await metric('iam_relay_publish_errors_total')).toBeGreaterThan(0), RECOVERY_TIMEOUT);
      expect(await readRelayCheckpoint(db.pool, topic)).toBe(checkpointBefore);
      expect(await metric('iam_relay_lag_events')).toBeGreaterThanOrEqual(60);

      await broker.start();
      const all = new Map(streams.map((stream) => [stream, [...before.get(stream)!, ...during.get(stream)!]]));
      await vi.waitFor(async () => expectEachAppliedOnceInStreamOrder(await effects(db.pool, groupId), all), RECOVERY_TIMEOUT).catch(async (error: unknown) => {
        // Says which side stalled: the relay (lag, publish errors) or the consumer (its group's lag).
        const [relayLag, publishErrors, consumerLag] = await Promise.all([
          metric('iam_relay_lag_events'),
          metric('iam_relay_publish_errors_total'),
          bus.consumerLag(groupId, topic).catch((lagError: Error) => `unknown (${lagError.message})`),
        ]);
        throw new Error(`not caught up: relay lag ${relayLag} events, ${publishErrors} publish errors, consumer lag ${consumerLag} messages`, { cause: error });
      });
      await vi.waitFor(async () => expect(await metric('iam_relay_lag_events')).toBe(0), RECOVERY_TIMEOUT);
    }, 300_000);
  }),
);
