/**
 * Bulk tuple writes through the API (POST /api/fga/tuples/bulk, 100 new tuples a request, fastify
 * inject in this process): tuples/s and latency at several concurrencies, how soon every read model
 * has caught up after the last write, and the SQL statements the whole instance sends per request
 * (the request itself, the projections and the log reader: a figure a loaded machine does not skew),
 * and the CPU the writes cost until every read model has them, of this process and of PostgreSQL
 * (also load-independent): with it, the rate a quiet 2-core machine can reach.
 * Each concurrency runs several rounds after a warm-up (a short row is noisy), one line each, then
 * the median round and the CPU over all rounds.
 * Usage: npm run bench:fga-bulk [-- --requests 400 --rounds 3]
 */
import { loadavg } from 'node:os';
import { activateDriveModel, viewerCheck } from './drive-dataset.ts';
import { BENCH_ADMIN, benchService, timed } from './service.ts';
import { countStatements } from './statement-counter.ts';
import { fmt, nodeCpu, numberOption, postgresCpu } from './support.ts';

const REQUESTS = numberOption('requests', 400);
const ROUNDS = numberOption('rounds', 3);
const WARM_UP_REQUESTS = 100;
const CONCURRENCIES = [8, 32];
const TUPLES = 100;

const load = () => loadavg().map((n) => fmt(n, 2)).join(' ');

interface Round {
  tuplesPerSecond: number;
  p50: number;
  p99: number;
  caughtUpMs: number;
  nodeSeconds: number;
  postgresSeconds: number;
}

/** CPU ms per 1,000 tuples, and the rate a quiet 2-core machine reaches with it: the service's event loop has one core, PostgreSQL the other and what the loop leaves. */
function cpuFigures(nodeSeconds: number, postgresSeconds: number, tuples: number) {
  const nodeMs = (nodeSeconds * 1e6) / tuples;
  const postgresMs = (postgresSeconds * 1e6) / tuples;
  return { nodeMs, postgresMs, bound: Math.min(1e6 / nodeMs, 2e6 / (nodeMs + postgresMs)) };
}

async function main(): Promise<void> {
  const statements = countStatements();
  const bench = await benchService();
  try {
    const { service, store, inject } = bench;
    const admin = (await inject('POST', '/api/auth/login', BENCH_ADMIN)).data.accessToken as string;
    await activateDriveModel(inject, admin);
    const postgres = await postgresCpu(bench.db.pool);
    let batch = 0;
    const bodies = (count: number) => {
      batch += 1;
      return Array.from({ length: count }, (_, r) => ({ writes: Array.from({ length: TUPLES }, (_, i) => viewerCheck(`u${i}`, `bulk${batch}-${r}-${i}`)) }));
    };
    const write = (requests: ReturnType<typeof bodies>, concurrency: number) => timed(requests.length, concurrency, (i) => inject('POST', '/api/fga/tuples/bulk', requests[i], admin));
    const caughtUp = async () => service.runner.waitFor(await store.headPosition(), 120_000);

    // Warm-up (JIT, the tenant's index, the connections), not measured.
    await write(bodies(WARM_UP_REQUESTS), 8);
    await caughtUp();

    console.log(`bulk tuple writes, ${TUPLES} tuples a request, ${ROUNDS} rounds of ${REQUESTS} requests per concurrency (node ${process.version}; load average ${load()})`);
    console.log('connections  round  tuples/s  p50 ms  p99 ms  caught up ms  statements/request  CPU ms/1k tuples: node  PostgreSQL  quiet 2-core bound tuples/s');
    const summaries: string[] = [];
    for (const concurrency of CONCURRENCIES) {
      const rounds: Round[] = [];
      for (let round = 1; round <= ROUNDS; round++) {
        const requests = bodies(REQUESTS);
        await caughtUp();
        statements.reset();
        const [nodeBefore, postgresBefore] = [nodeCpu(), postgres()];
        const writes = await write(requests, concurrency);
        const written = performance.now();
        await caughtUp();
        const caughtUpMs = performance.now() - written;
        const postgresAfter = postgres();
        const result: Round = {
          tuplesPerSecond: writes.perSecond * TUPLES,
          p50: writes.p50,
          p99: writes.p99,
          caughtUpMs,
          nodeSeconds: nodeCpu() - nodeBefore,
          postgresSeconds: postgresAfter === null || postgresBefore === null ? Number.NaN : postgresAfter - postgresBefore,
        };
        rounds.push(result);
        const cpu = cpuFigures(result.nodeSeconds, result.postgresSeconds, REQUESTS * TUPLES);
        console.log(
          `${String(concurrency).padStart(11)}  ${String(round).padStart(5)}  ${fmt(result.tuplesPerSecond).padStart(8)}  ${fmt(result.p50, 1).padStart(6)}  ${fmt(result.p99, 1).padStart(6)}  ` +
            `${fmt(caughtUpMs).padStart(12)}  ${fmt(statements.total() / REQUESTS, 1).padStart(18)}  ${fmt(cpu.nodeMs, 1).padStart(22)}  ${fmt(cpu.postgresMs, 1).padStart(10)}  ${fmt(cpu.bound).padStart(26)}`,
        );
      }
      const rates = rounds.map((r) => r.tuplesPerSecond).sort((a, b) => a - b);
      const median = rates[Math.floor(rates.length / 2)]!;
      const cpu = cpuFigures(
        rounds.reduce((sum, r) => sum + r.nodeSeconds, 0),
        rounds.reduce((sum, r) => sum + r.postgresSeconds, 0),
        ROUNDS * REQUESTS * TUPLES,
      );
      summaries.push(
        `${concurrency} connections: median ${fmt(median)} tuples/s (min ${fmt(rates[0]!)}, max ${fmt(rates.at(-1)!)}); caught up at most ${fmt(Math.max(...rounds.map((r) => r.caughtUpMs)))} ms after the last write; ` +
          `CPU per 1k tuples node ${fmt(cpu.nodeMs, 1)} + PostgreSQL ${fmt(cpu.postgresMs, 1)} ms, quiet 2-core bound ${fmt(cpu.bound)} tuples/s`,
      );
      if (concurrency === CONCURRENCIES.at(-1)) console.log(`most frequent statements per request (last round):\n${statements.top(REQUESTS, 10).join('\n')}`);
    }
    console.log(summaries.join('\n'));
    console.log(`load average at the end: ${load()}`);
  } finally {
    await bench.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
