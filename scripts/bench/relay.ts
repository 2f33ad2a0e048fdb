/**
 * Relay benchmark on a real Kafka broker: events per second from append to a consumer group (a
 * plain one, and one applying each event once through the PostgreSQL inbox), then the end-to-end
 * latency (append committed -> delivered to the consumer) p50/p99 at a steady append rate.
 * Needs a broker: scripts/kafka/start.sh (or KAFKA_BROKERS).
 * Usage: npm run bench:relay [-- --events 20000 --rate 200 --seconds 10]
 */
import pino from 'pino';
import { z } from 'zod';
import { deduplicatingHandler } from '../../src/platform/bus/deduplicating-consumer.ts';
import { KafkaEventBus } from '../../src/platform/bus/kafka.ts';
import type { BatchHandler } from '../../src/platform/bus/port.ts';
import { PostgresInbox } from '../../src/platform/bus/postgres-inbox.ts';
import { EventRelay } from '../../src/platform/bus/relay.ts';
import { PostgresEventStore } from '../../src/platform/eventstore/postgres.ts';
import type { NewEvent } from '../../src/platform/eventstore/port.ts';
import { EventCatalogue } from '../../src/platform/events/catalogue.ts';
import { defineEvent } from '../../src/platform/events/define-event.ts';
import { newId } from '../../src/platform/ids.ts';
import { benchDatabase, fmt, numberOption as option, percentile } from './support.ts';

const totalEvents = option('events', 20_000);
const rate = option('rate', 200);
const seconds = option('seconds', 10);
const WRITERS = 8;
const EVENTS_PER_APPEND = 10;
const PARTITIONS = 6;

/** The bench's own events, redacted through a catalogue as the service's are. */
const benchData = z.strictObject({ email: z.string(), firstName: z.string(), passwordHash: z.string() });
const benchCatalogue = new EventCatalogue(
  ['BenchEvent', 'SteadyEvent'].map((type) => defineEvent({ type, data: benchData, sensitive: ['passwordHash'] })),
);

const event = (type = 'BenchEvent'): NewEvent => ({
  id: newId(),
  type,
  data: { email: 'someone@example.com', firstName: 'Some', passwordHash: '$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA' },
  metadata: { tenantId: 'bench', actor: 'system', occurredAt: new Date().toISOString() },
});

/** A handler that resolves `finished` once `count` distinct events of `type` went through `handler`. */
function counting(count: number, type: string, handler: BatchHandler) {
  const deliveredAt = new Map<string, number>();
  let done: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => (done = resolve));
  const wrapped: BatchHandler = async (batch) => {
    await handler(batch);
    for (const { value } of batch) if (value.type === type && !deliveredAt.has(value.id)) deliveredAt.set(value.id, performance.now());
    if (deliveredAt.size >= count) done();
  };
  return { handler: wrapped, finished, deliveredAt };
}

async function main(): Promise<void> {
  const brokers = (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
  const logger = pino({ level: 'warn' });
  const db = await benchDatabase();
  await db.pool.query('create table bench_effects (event_id text primary key)');
  const store = new PostgresEventStore(db.pool, { pollIntervalMs: 1000 });
  const bus = await KafkaEventBus.connect({ brokers, clientId: 'bench-relay', logger });
  const topic = `bench.relay.${newId()}`;
  await bus.ensureTopic(topic, { partitions: PARTITIONS, replicationFactor: 1 });

  const appendsPerWriter = Math.ceil(totalEvents / WRITERS / EVENTS_PER_APPEND);
  const events = appendsPerWriter * WRITERS * EVENTS_PER_APPEND;
  const steadyCount = rate * seconds;
  const plain = counting(events, 'BenchEvent', async () => undefined);
  const applyOnce = deduplicatingHandler({
    groupId: 'bench-inbox',
    inbox: new PostgresInbox(db.pool),
    applyEvent: async (e, tx) => void (await tx.query('insert into bench_effects values ($1)', [e.id])),
  });
  const inbox = counting(events, 'BenchEvent', applyOnce);
  const steady = counting(steadyCount, 'SteadyEvent', async () => undefined);
  await bus.subscribe({ groupId: 'bench-plain', topic, fromBeginning: true, handler: plain.handler });
  await bus.subscribe({ groupId: 'bench-inbox', topic, fromBeginning: true, handler: inbox.handler });
  await bus.subscribe({ groupId: 'bench-latency', topic, fromBeginning: true, handler: steady.handler });
  const relay = new EventRelay({ store, bus, database: db.pool.options, topic, publicData: (e) => benchCatalogue.publicData(e), logger });
  relay.start();

  console.log(`Relay to Kafka ${brokers.join(',')}, topic of ${PARTITIONS} partitions (node ${process.version})`);
  const started = performance.now();
  await Promise.all(
    Array.from({ length: WRITERS }, async () => {
      const stream = `bench-bench.${newId()}`;
      for (let i = 0; i < appendsPerWriter; i++) await store.append(stream, Array.from({ length: EVENTS_PER_APPEND }, event));
    }),
  );
  const appended = (performance.now() - started) / 1000;
  console.log(`burst: ${fmt(events)} events appended by ${WRITERS} writers in ${fmt(appended, 2)} s (${fmt(events / appended)} events/s)`);
  for (const [name, group] of [['plain consumer', plain], ['inbox consumer (PostgreSQL dedup + effect)', inbox]] as const) {
    await group.finished;
    const elapsed = (performance.now() - started) / 1000;
    console.log(`  append -> ${name}: all ${fmt(events)} in ${fmt(elapsed, 2)} s = ${fmt(events / elapsed)} events/s`);
  }

  // Steady load: single-event appends at `rate` per second; latency from commit to delivery.
  const committedAt = new Map<string, number>();
  const stream = `bench-bench.${newId()}`;
  const steadyStart = performance.now();
  for (let i = 0; i < steadyCount; i++) {
    const due = steadyStart + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const next = event('SteadyEvent');
    await store.append(stream, [next]);
    committedAt.set(next.id, performance.now());
  }
  await steady.finished;
  const latencies = [...committedAt].map(([id, at]) => steady.deliveredAt.get(id)! - at).sort((a, b) => a - b);
  console.log(
    `steady ${rate} events/s for ${seconds} s: append -> consumer latency p50 ${fmt(percentile(latencies, 50), 1)} ms, p99 ${fmt(percentile(latencies, 99), 1)} ms, max ${fmt(latencies.at(-1)!, 1)} ms over ${fmt(latencies.length)} events`,
  );

  await relay.stop();
  await bus.close();
  await store.close();
  await db.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
