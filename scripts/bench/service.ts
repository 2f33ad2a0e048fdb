import pino from 'pino';
import { buildService } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { systemClock } from '../../src/platform/clock.ts';
import { PostgresEventStore } from '../../src/platform/eventstore/postgres.ts';
import { benchDatabase, percentile } from './support.ts';

/** The master key of every benchmark service (it names reservation streams, among others). */
export const BENCH_MASTER_KEY = 'bench';

export const BENCH_ADMIN = { email: 'root@bench.test', password: 'Bench-Passw0rd' };

/** The whole service on a fresh benchmark database, driven in-process (fastify inject), tenant `platform`. */
export async function benchService(
  env: Record<string, string> = {},
  /** Runs on the built service before it starts (seeding the log under the readers' checkpoints). */
  beforeStart?: (built: { db: Awaited<ReturnType<typeof benchDatabase>>; store: PostgresEventStore; service: Awaited<ReturnType<typeof buildService>> }) => Promise<void>,
) {
  const db = await benchDatabase();
  const config = loadConfig({
    DATABASE_URL: db.url,
    IAM_BOOTSTRAP_TENANT: 'platform',
    IAM_BOOTSTRAP_ADMIN_EMAIL: BENCH_ADMIN.email,
    IAM_BOOTSTRAP_ADMIN_PASSWORD: BENCH_ADMIN.password,
    LOG_LEVEL: 'warn',
    SUBSCRIPTION_POLL_MS: '200',
    RATE_LIMIT_ENABLED: 'false',
    ...env,
  });
  const store = new PostgresEventStore(db.pool, { pollIntervalMs: 200 });
  const service = await buildService({ config, logger: pino({ level: 'warn' }), pool: db.pool, store, clock: systemClock, masterKey: BENCH_MASTER_KEY });
  await beforeStart?.({ db, store, service }).catch(async (error: unknown) => {
    await db.close();
    throw error;
  });
  await service.start();
  const inject = async (method: string, url: string, body?: unknown, token?: string) => {
    const response = await service.app.inject({
      method: method as 'GET',
      url,
      headers: { 'x-tenant': 'platform', 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      ...(body ? { payload: JSON.stringify(body) } : {}),
    });
    if (response.statusCode >= 400) throw new Error(`${method} ${url}: ${response.statusCode} ${response.body}`);
    return JSON.parse(response.body);
  };
  return {
    db,
    store,
    service,
    inject,
    async close() {
      await service.stop();
      await store.close();
      await db.close();
    },
  };
}

/** Runs `count` tasks with `concurrency` workers: throughput and latency percentiles (ms). */
export async function timed<T>(count: number, concurrency: number, task: (i: number) => Promise<T>) {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const i = next++;
        const t0 = performance.now();
        await task(i);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { perSecond: count / seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}
