/**
 * Event store benchmark: appends per second with 1, 8 and 32 concurrent writers (single events and
 * 10-event batches), readAll throughput, and projection lag p50/p99 under that load.
 * Usage: npm run bench:eventstore [-- --seconds 3]
 */
import pino from 'pino';
import { PostgresEventStore } from '../../src/platform/eventstore/postgres.ts';
import type { NewEvent } from '../../src/platform/eventstore/port.ts';
import { newId } from '../../src/platform/ids.ts';
import { defineProjection } from '../../src/platform/projections/projection.ts';
import { ProjectionRunner } from '../../src/platform/projections/runner.ts';
import { benchDatabase, fmt, percentile } from './support.ts';

const flag = process.argv.indexOf('--seconds');
const seconds = flag > 0 ? Number(process.argv[flag + 1]) : 3;

const event = (): NewEvent => ({
  id: newId(),
  type: 'BenchEvent',
  data: { email: 'someone@example.com', firstName: 'Some', lastName: 'One', roles: ['user'] },
  metadata: { tenantId: 'bench', actor: 'system', occurredAt: new Date().toISOString() },
});

async function main(): Promise<void> {
  const db = await benchDatabase();
  const store = new PostgresEventStore(db.pool, { pollIntervalMs: 1000 });
  await db.pool.query('create table bench_counts (stream_id text primary key, n int not null)');
  const lags: number[] = [];
  const projection = defineProjection({
    name: 'bench',
    tables: ['bench_counts'],
    handlers: {
      BenchEvent: async (e, tx) => {
        lags.push(Date.now() - new Date(e.metadata.occurredAt).getTime());
        await tx.query('insert into bench_counts values ($1, 1) on conflict (stream_id) do update set n = bench_counts.n + 1', [e.streamId]);
      },
    },
  });
  const runner = new ProjectionRunner([projection], store, db.pool, pino({ level: 'warn' }));
  await runner.start();

  console.log(`PostgreSQL event store, ${seconds}s per case, projection running (node ${process.version})`);
  console.log('writers  batch  appends/s  events/s  append p50 ms  append p99 ms');
  let last = 0n;
  for (const batch of [1, 10]) {
    for (const writers of [1, 8, 32]) {
      const latencies: number[] = [];
      const deadline = Date.now() + seconds * 1000;
      await Promise.all(
        Array.from({ length: writers }, async () => {
          const stream = `bench-bench.${newId()}`;
          let revision: bigint | 'no_stream' = 'no_stream';
          while (Date.now() < deadline) {
            const started = performance.now();
            const result = await store.append(stream, Array.from({ length: batch }, event), revision);
            latencies.push(performance.now() - started);
            revision = result.nextExpectedRevision;
            if (result.position > last) last = result.position;
          }
        }),
      );
      latencies.sort((a, b) => a - b);
      const appendsPerSecond = latencies.length / seconds;
      console.log(
        `${String(writers).padStart(7)}  ${String(batch).padStart(5)}  ${fmt(appendsPerSecond).padStart(9)}  ${fmt(appendsPerSecond * batch).padStart(8)}  ${fmt(percentile(latencies, 50), 2).padStart(13)}  ${fmt(percentile(latencies, 99), 2).padStart(13)}`,
      );
    }
  }
  await runner.waitFor(last, 120_000);
  lags.sort((a, b) => a - b);
  console.log(`projection lag under that load (append -> read model): p50 ${fmt(percentile(lags, 50))} ms, p99 ${fmt(percentile(lags, 99))} ms over ${fmt(lags.length)} events`);
  await runner.stop();

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
  await store.close();
  await db.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
