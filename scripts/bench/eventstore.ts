/**
 * Event store benchmark:
 * 1. appends/s against concurrency (1 to 64 writers, single events and 10-event batches), beside
 *    the raw PostgreSQL rate of multi-row INSERTs of the same batch size into a plain table;
 * 2. the projections' apply rate when they replay that backlog (--followers of them, 12 by default
 *    as in the service, all through one shared log reader);
 * 3. the read-your-writes lag (append acknowledged -> every projection committed past it), p50/p99,
 *    with the writers paced at half the maximum append rate measured in 1, split at the moment the
 *    shared reader's tail read the append (before: visibility bound and wake-up; after: projections).
 * Usage: npm run bench:eventstore [-- --seconds 3] [--in-flight 4] [--followers 12] [--separate-readers]
 *   [--writers 1,4,8] [--batches 1] (a part of the curve only, for a quick look) [--rate 4000] (the lag at this many events/s
 *   instead of half the maximum: before/after comparisons at the same rate)
 * (--in-flight: append groups written at once; a large number such as 1000 turns grouping off;
 * --separate-readers: each projection reads the log on its own, as before the shared reader.)
 */
import { loadavg } from 'node:os';
import pino from 'pino';
import type { Pool } from '../../src/platform/db/pool.ts';
import { PostgresEventStore } from '../../src/platform/eventstore/postgres.ts';
import type { EventStore, NewEvent, SubscribeOptions } from '../../src/platform/eventstore/port.ts';
import { SharedLogReader } from '../../src/platform/eventstore/shared-log-reader.ts';
import { newId } from '../../src/platform/ids.ts';
import { defineProjection } from '../../src/platform/projections/projection.ts';
import { ProjectionRunner } from '../../src/platform/projections/runner.ts';
import { benchDatabase, fmt, nodeCpu, numberListOption, numberOption, percentile, postgresCpu } from './support.ts';

const seconds = numberOption('seconds', 3);
const inFlight = numberOption('in-flight');
const followers = numberOption('followers', 12);
const fixedRate = numberOption('rate');
const separateReaders = process.argv.includes('--separate-readers');
const WRITERS = numberListOption('writers', [1, 4, 8, 16, 32, 64]);
const BATCHES = numberListOption('batches', [1, 10]);

const data = { email: 'someone@example.com', firstName: 'Some', lastName: 'One', roles: ['user'] };
const event = (): NewEvent => ({
  id: newId(),
  type: 'BenchEvent',
  data,
  metadata: { tenantId: 'bench', actor: 'system', occurredAt: new Date().toISOString() },
});

interface Rate {
  perSecond: number;
  p50: number;
  p99: number;
}

/** Runs `writers` loops of `work` for `seconds`, each loop optionally paced by `slot`. */
async function drive(writers: number, work: (writer: number) => Promise<void>, slot?: () => Promise<void>): Promise<Rate> {
  const latencies: number[] = [];
  const deadline = Date.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: writers }, async (_, writer) => {
      while (Date.now() < deadline) {
        await slot?.();
        const t0 = performance.now();
        await work(writer);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { perSecond: latencies.length / elapsed, p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}

/** Each writer appends to its own stream, expecting the revision it wrote last. */
function appender(store: PostgresEventStore, writers: number, batch: number, onAppended?: (position: bigint) => void) {
  const streams = Array.from({ length: writers }, () => ({ id: `bench-bench.${newId()}`, revision: 'no_stream' as bigint | 'no_stream' }));
  return async (writer: number) => {
    const stream = streams[writer]!;
    const result = await store.append(stream.id, Array.from({ length: batch }, event), stream.revision);
    stream.revision = result.nextExpectedRevision;
    onAppended?.(result.position);
  };
}

/** The reference: one multi-row INSERT (autocommit) of `batch` event-shaped rows into a plain table. */
function rawInserter(pool: Pool, batch: number) {
  return async () => {
    const rows = Array.from({ length: batch }, event);
    await pool.query(
      `insert into bench_raw (event_id, stream_id, type, data, metadata)
       select * from unnest($1::uuid[], $2::text[], $3::text[], $4::jsonb[], $5::jsonb[])`,
      [rows.map((r) => r.id), rows.map(() => 'bench-raw'), rows.map((r) => r.type), rows.map((r) => JSON.stringify(r.data)), rows.map((r) => JSON.stringify(r.metadata))],
    );
  };
}

/** Hands out evenly spaced start times so that all writers together append `perSecond` times a second. */
function pacer(perSecond: number): () => Promise<void> {
  const started = performance.now();
  let issued = 0;
  return () => {
    const due = started + (issued++ * 1000) / perSecond;
    const wait = due - performance.now();
    return wait > 0 ? new Promise((resolve) => setTimeout(resolve, wait)) : Promise.resolve();
  };
}

/** The store the shared reader's tail reads through, noting when the tail read each position (while `timing`). */
class TailClock {
  readonly readAt = new Map<bigint, number>();
  reads = 0;
  timing = false;
  readonly store: EventStore;

  constructor(inner: PostgresEventStore) {
    const subscribeToAll = (options: SubscribeOptions) =>
      inner.subscribeToAll({
        ...options,
        onEvents: (events) => {
          if (this.timing) {
            this.reads += 1;
            for (const { position } of events) this.readAt.set(position, performance.now());
          }
          return options.onEvents(events);
        },
      });
    this.store = new Proxy(inner, { get: (target, key) => (key === 'subscribeToAll' ? subscribeToAll : Reflect.get(target, key, target)) });
  }
}

/** Counts events per stream in its own table: one upsert per run of events (the batch form the hot projections use). */
const counts = (table: string) =>
  defineProjection({
    name: table,
    tables: [table],
    handlers: {},
    batchWrites: {
      BenchEvent: (events) => {
        const perStream = new Map<string, number>();
        for (const e of events) perStream.set(e.streamId, (perStream.get(e.streamId) ?? 0) + 1);
        return [
          {
            text: `insert into ${table} select * from unnest($1::text[], $2::int[]) on conflict (stream_id) do update set n = ${table}.n + excluded.n`,
            values: [[...perStream.keys()], [...perStream.values()]],
          },
        ];
      },
    },
  });

async function main(): Promise<void> {
  const db = await benchDatabase();
  const store = new PostgresEventStore(db.pool, { pollIntervalMs: 1000, ...(inFlight ? { groupCommit: { maxInFlight: inFlight } } : {}) });
  const tables = Array.from({ length: followers }, (_, i) => `bench_counts_${i}`);
  for (const table of tables) await db.pool.query(`create table ${table} (stream_id text primary key, n int not null)`);
  await db.pool.query(
    'create table bench_raw (id bigserial primary key, event_id uuid not null unique, stream_id text not null, type text not null, data jsonb not null, metadata jsonb not null)',
  );
  const logger = pino({ level: 'warn' });
  const cases: { writers: number; batch: number; store: Rate; raw: Rate }[] = [];

  console.log(
    `PostgreSQL event store, ${seconds}s per case (node ${process.version}, pool ${db.pool.options.max}, append groups in flight ${inFlight ?? 'default'}; ` +
      `load average ${loadavg().map((n) => fmt(n, 2)).join(' ')})`,
  );
  console.log('writers  batch  appends/s  events/s  p50 ms  p99 ms | raw inserts/s  rows/s  p50 ms | store/raw');
  for (const batch of BATCHES) {
    for (const writers of WRITERS) {
      const appends = await drive(writers, appender(store, writers, batch));
      const raw = await drive(writers, rawInserter(db.pool, batch));
      cases.push({ writers, batch, store: appends, raw });
      console.log(
        `${String(writers).padStart(7)}  ${String(batch).padStart(5)}  ${fmt(appends.perSecond).padStart(9)}  ${fmt(appends.perSecond * batch).padStart(8)}  ${fmt(appends.p50, 1).padStart(6)}  ${fmt(appends.p99, 1).padStart(6)} | ` +
          `${fmt(raw.perSecond).padStart(13)}  ${fmt(raw.perSecond * batch).padStart(6)}  ${fmt(raw.p50, 1).padStart(6)} | ${fmt((appends.perSecond / raw.perSecond) * 100).padStart(8)}%`,
      );
    }
  }

  // 2. Replay the whole backlog the cases above appended.
  const backlog = Number((await db.pool.query('select count(*) as n from events')).rows[0].n);
  const head = await store.headPosition();
  const tail = new TailClock(store);
  const followed: EventStore = separateReaders ? store : new SharedLogReader(tail.store);
  const replay = new ProjectionRunner(tables.map(counts), followed, db.pool, logger);
  const replayStarted = performance.now();
  await replay.start();
  await replay.waitFor(head, 600_000);
  const replaySeconds = (performance.now() - replayStarted) / 1000;
  const maxEvents = Math.max(...cases.map((c) => c.store.perSecond * c.batch));
  console.log(
    `projection replay (${followers} projections, ${separateReaders ? 'each reading the log on its own' : 'one shared log reader'}): ` +
      `${fmt(backlog)} events in ${fmt(replaySeconds, 2)} s = ${fmt(backlog / replaySeconds)} events/s per projection ` +
      `(${fmt(backlog / replaySeconds / maxEvents, 2)}x the maximum append rate of ${fmt(maxEvents)} events/s)`,
  );

  // 3. Live: writers paced at half the maximum append rate of the fastest case, projection running.
  const fastest = cases.reduce((best, c) => (c.store.perSecond * c.batch > best.store.perSecond * best.batch ? c : best));
  const target = fixedRate === undefined ? fastest.store.perSecond / 2 : fixedRate / fastest.batch;
  const lags: number[] = [];
  const toTail: number[] = [];
  const tailToApplied: number[] = [];
  const pending: Promise<unknown>[] = [];
  tail.timing = true;
  const postgres = await postgresCpu(db.pool);
  const [nodeBefore, postgresBefore, commitsBefore] = [nodeCpu(), postgres(), replay.batches.transactions];
  const onAppended = (position: bigint) => {
    const acknowledged = performance.now();
    pending.push(
      replay.waitFor(position, 30_000).then((reached) => {
        const applied = performance.now();
        lags.push(reached ? applied - acknowledged : Number.POSITIVE_INFINITY);
        const read = tail.readAt.get(position);
        if (!reached || read === undefined) return;
        // The tail may read an append before its writer hears the acknowledgement.
        toTail.push(Math.max(0, read - acknowledged));
        tailToApplied.push(applied - Math.max(read, acknowledged));
      }),
    );
  };
  const live = await drive(fastest.writers, appender(store, fastest.writers, fastest.batch, onAppended), pacer(target));
  await Promise.all(pending);
  const liveEvents = live.perSecond * seconds * fastest.batch;
  const cpuPerThousand = (before: number | null, after: number | null) => (before === null || after === null ? Number.NaN : ((after - before) * 1e6) / liveEvents);
  const cpu = { node: cpuPerThousand(nodeBefore, nodeCpu()), postgres: cpuPerThousand(postgresBefore, postgres()) };
  const transactions = ((replay.batches.transactions - commitsBefore) * 1000) / liveEvents;
  for (const figures of [lags, toTail, tailToApplied]) figures.sort((a, b) => a - b);
  console.log(
    `projection lag at half the maximum rate (${fastest.writers} writers x ${fastest.batch} events, target ${fmt(target)} appends/s, ` +
      `achieved ${fmt(live.perSecond)} appends/s = ${fmt(live.perSecond * fastest.batch)} events/s): ` +
      `append acknowledged -> read model committed p50 ${fmt(percentile(lags, 50), 1)} ms, p99 ${fmt(percentile(lags, 99), 1)} ms over ${fmt(lags.length)} appends; ` +
      `CPU per 1k events appended and projected: node ${fmt(cpu.node, 1)} ms, PostgreSQL ${fmt(cpu.postgres, 1)} ms; ` +
      `${fmt(transactions)} projection transactions per 1k events`,
  );
  if (!separateReaders) {
    console.log(
      `  of which acknowledged -> read by the log tail (visibility bound, wake-up, read) p50 ${fmt(percentile(toTail, 50), 1)} ms, p99 ${fmt(percentile(toTail, 99), 1)} ms; ` +
        `read by the tail -> committed by every projection p50 ${fmt(percentile(tailToApplied, 50), 1)} ms, p99 ${fmt(percentile(tailToApplied, 99), 1)} ms; ` +
        `${fmt((tail.reads * 1000) / liveEvents)} tail reads per 1k events`,
    );
  }
  await replay.stop();

  const total = Number((await db.pool.query('select count(*) as n from events')).rows[0].n);
  const started = performance.now();
  let read = 0;
  let after: bigint | undefined;
  for (;;) {
    const page = await store.readAll(after, 1000);
    if (page.length === 0) break;
    read += page.length;
    after = page.at(-1)!.position;
  }
  const elapsed = (performance.now() - started) / 1000;
  console.log(`readAll: ${fmt(read)} of ${fmt(total)} events in ${fmt(elapsed, 2)} s = ${fmt(read / elapsed)} events/s (pages of 1000)`);
  console.log(`load average at the end: ${loadavg().map((n) => fmt(n, 2)).join(' ')}`);
  await store.close();
  await db.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
