import type { Logger } from 'pino';
import { Counter, Gauge } from 'prom-client';
import type { Queryable } from '../db/pool.ts';
import type { EventStore } from '../eventstore/port.ts';
import type { Metrics } from '../metrics.ts';
import type { EventBus } from './port.ts';
import { readRelayCheckpoint } from './relay-checkpoints.ts';

/** What the relay reports while it runs. */
export interface RelayMetrics {
  publishFailed(): void;
  leading(isLeader: boolean): void;
}

/** Reading further to count a larger lag would cost more than the number is worth. */
const LAG_COUNT_CAP = 10_000;

/**
 * The relay's metrics. The lag is counted from the checkpoint in PostgreSQL, so every instance
 * reports it, wherever the leading relay runs, and with either event store.
 */
export function registerRelayMetrics(metrics: Metrics, db: Queryable, store: EventStore, topic: string): RelayMetrics {
  metrics.gauge('iam_relay_lag_events', `Events of the global log the relay has not published yet (at most ${LAG_COUNT_CAP})`, ['topic'], async (gauge) => {
    const pending = await store.readAll(await readRelayCheckpoint(db, topic), LAG_COUNT_CAP);
    gauge.set({ topic }, pending.length);
  });
  const publishErrors = new Counter({
    name: 'iam_relay_publish_errors_total',
    help: 'Relay batches the bus refused (each is retried from the checkpoint)',
    labelNames: ['topic'],
    registers: [metrics.registry],
  });
  const leader = new Gauge({
    name: 'iam_relay_leader',
    help: '1 while this process holds the relay leader lock of the topic',
    labelNames: ['topic'],
    registers: [metrics.registry],
  });
  // Exported from the start, so an alert on a rate sees the series before the first error.
  publishErrors.inc({ topic }, 0);
  leader.set({ topic }, 0);
  return {
    publishFailed: () => publishErrors.inc({ topic }),
    leading: (isLeader) => leader.set({ topic }, isLeader ? 1 : 0),
  };
}

/** Per consumer group of this instance: messages of its topic not committed yet. */
export function registerConsumerLag(metrics: Metrics, bus: EventBus, logger: Logger): void {
  metrics.gauge('iam_bus_consumer_lag_messages', 'Messages a consumer group has not committed yet', ['group', 'topic'], async (gauge) => {
    gauge.reset();
    for (const { groupId, topic } of bus.subscribedGroups()) {
      try {
        gauge.set({ group: groupId, topic }, await bus.consumerLag(groupId, topic));
      } catch (error) {
        // A broker outage must not fail the whole scrape: the group's series is left out.
        logger.warn({ err: error, groupId, topic }, 'consumer lag unavailable');
      }
    }
  });
}
