/**
 * Bulk tuple writes through the API (POST /api/fga/tuples/bulk, 100 new tuples a request, fastify
 * inject in this process): tuples/s and latency at several concurrencies, how soon every read model
 * has caught up after the last write, and the SQL statements the whole instance sends per request
 * (the request itself, the projections and the log reader: a figure a loaded machine does not skew),
 * and the CPU the writes cost until every read model has them, of this process and of PostgreSQL
 * (also load-independent): with it, the rate a quiet 2-core machine can reach.
 * Usage: npm run bench:fga-bulk [-- --requests 200]
 */
import { loadavg } from 'node:os';
import { activateDriveModel, viewerCheck } from './drive-dataset.ts';
import { BENCH_ADMIN, benchService, timed } from './service.ts';
import { countStatements } from './statement-counter.ts';
import { fmt, nodeCpu, numberOption, postgresCpu } from './support.ts';

const REQUESTS = numberOption('requests', 200);
const CONCURRENCIES = [8, 32];
const TUPLES = 100;

async function main(): Promise<void> {
  const statements = countStatements();
  const bench = await benchService();
  try {
    const { service, store, inject } = bench;
    const admin = (await inject('POST', '/api/auth/login', BENCH_ADMIN)).data.accessToken as string;
    await activateDriveModel(inject, admin);
    console.log(`bulk tuple writes, ${TUPLES} tuples a request, ${REQUESTS} requests per row (node ${process.version}; load average ${loadavg().map((n) => fmt(n, 2)).join(' ')})`);
    const postgres = await postgresCpu(bench.db.pool);
    console.log('connections  tuples/s  p50 ms  p99 ms  caught up ms  statements/request  CPU ms/1k tuples: node  PostgreSQL  quiet 2-core bound tuples/s');
    for (const [round, concurrency] of CONCURRENCIES.entries()) {
      const bodies = Array.from({ length: REQUESTS }, (_, r) => ({
        writes: Array.from({ length: TUPLES }, (_, i) => viewerCheck(`u${i}`, `bulk${round}-${r}-${i}`)),
      }));
      await service.runner.waitFor(await store.headPosition(), 60_000);
      statements.reset();
      const [nodeBefore, postgresBefore] = [nodeCpu(), postgres()];
      const writes = await timed(REQUESTS, concurrency, (i) => inject('POST', '/api/fga/tuples/bulk', bodies[i], admin));
      const written = performance.now();
      await service.runner.waitFor(await store.headPosition(), 120_000);
      const caughtUp = performance.now() - written;
      const perThousand = (seconds: number) => (seconds * 1e6) / (REQUESTS * TUPLES);
      const nodeMs = perThousand(nodeCpu() - nodeBefore);
      const postgresAfter = postgres();
      const postgresMs = postgresAfter === null || postgresBefore === null ? Number.NaN : perThousand(postgresAfter - postgresBefore);
      // The service's event loop has one core; PostgreSQL the other and what the loop leaves.
      const bound = Math.min(1e6 / nodeMs, 2e6 / (nodeMs + postgresMs));
      console.log(
        `${String(concurrency).padStart(11)}  ${fmt(writes.perSecond * TUPLES).padStart(8)}  ${fmt(writes.p50, 1).padStart(6)}  ${fmt(writes.p99, 1).padStart(6)}  ` +
          `${fmt(caughtUp).padStart(12)}  ${fmt(statements.total() / REQUESTS, 1).padStart(18)}  ${fmt(nodeMs, 1).padStart(22)}  ${fmt(postgresMs, 1).padStart(10)}  ${fmt(bound).padStart(26)}`,
      );
      if (round === CONCURRENCIES.length - 1) console.log(`most frequent statements per request:\n${statements.top(REQUESTS, 10).join('\n')}`);
    }
    console.log(`load average at the end: ${loadavg().map((n) => fmt(n, 2)).join(' ')}`);
  } finally {
    await bench.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
