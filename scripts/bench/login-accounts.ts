import type { Pool } from '../../src/platform/db/pool.ts';
import { pinToCore } from './http-load.ts';
import { BENCH_ADMIN, benchService } from './service.ts';
import type { countStatements } from './statement-counter.ts';
import { eventLoopCpu, nodeCpu, postgresCpu, threadCpu, walBytes } from './support.ts';

export type BenchService = Awaited<ReturnType<typeof benchService>>;

/** The bench service with the process (every thread) on `core`, once the embedded PostgreSQL runs (so PostgreSQL stays unpinned). */
export async function pinnedBenchService(core: number, measure: (bench: BenchService, pinned: boolean) => Promise<void>, env: Record<string, string> = {}): Promise<void> {
  const bench = await benchService(env);
  const pinned = pinToCore(process.pid, core);
  try {
    await measure(bench, pinned);
  } finally {
    await bench.close();
  }
}

/** `count` accounts with the bench password, each able to hold any number of sessions; answers their login bodies. */
export async function loginAccounts(inject: BenchService['inject'], admin: string, count: number) {
  await inject('PUT', '/api/realm-settings', { section: 'login', data: { maxConcurrentSessions: 0 } }, admin);
  const users = Array.from({ length: count }, (_, i) => ({ email: `hot${i}@bench.test`, password: BENCH_ADMIN.password }));
  for (const user of users) await inject('POST', '/api/users', user, admin);
  return users;
}

/**
 * The server's CPU per unit of `work` (every thread, and the event loop alone), PostgreSQL's, and the
 * SQL statements sent and the WAL written, counted until the read models have applied everything the work appended.
 * `work` may call `start` when its first request goes out, so that its set-up (a load generator's
 * start) is not counted. PostgreSQL's counter (a walk of /proc) is read outside the window.
 */
export async function serverCpuMeter({ service, store }: BenchService, pool: Pool, statements: ReturnType<typeof countStatements>) {
  const postgres = await postgresCpu(pool);
  return async <T>(count: number, work: (start: () => void) => Promise<T>) => {
    const wal = await walBytes(pool);
    let postgresBefore = postgres();
    let [before, loopBefore, threadsBefore] = [nodeCpu(), eventLoopCpu(), threadCpu()];
    statements.reset();
    const start = () => {
      postgresBefore = postgres();
      [before, loopBefore, threadsBefore] = [nodeCpu(), eventLoopCpu(), threadCpu()];
      statements.reset();
    };
    const result = await work(start);
    await service.runner.waitFor(await store.headPosition(), 60_000);
    const [after, loopAfter, threadsAfter, postgresAfter] = [nodeCpu(), eventLoopCpu(), threadCpu(), postgres()];
    const statementsEach = statements.total() / count;
    const walEach = (await wal()) / count;
    const each = (end: number | null, begin: number | null) => (end === null || begin === null ? Number.NaN : ((end - begin) * 1000) / count);
    // Per thread (id order), what each used (threads that ended meanwhile are left out).
    const threads = [...threadsAfter].sort(([a], [b]) => a - b).map(([tid, { name, seconds }]) => ({ tid, name, msEach: each(seconds, threadsBefore.get(tid)?.seconds ?? 0) }));
    return { result, msEach: each(after, before), loopMsEach: each(loopAfter, loopBefore), threads, postgresMsEach: each(postgresAfter, postgresBefore), statementsEach, walEach };
  };
}
