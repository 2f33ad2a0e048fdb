import { randomUUID } from 'node:crypto';
import { timed } from './service.ts';
import { eventLoopCpu, fmt, nodeCpu } from './support.ts';

/**
 * Where a benchmark's CPU went, per unit of work (Linux /proc, 10 ms resolution: use a few thousand
 * units): this process's event loop (the main thread), its other threads (libuv's pool, where RS256
 * signatures run, and V8's GC helpers), and the PostgreSQL server (`postgres`: postgresCpu's
 * counter, in seconds). CPU time, unlike a rate, is barely skewed by other load on the machine.
 */
export function cpuSplit(postgres: () => number | null) {
  // Milliseconds; the event loop's reads 0 where /proc is missing (not Linux).
  const read = () => ({ main: (eventLoopCpu() ?? 0) * 1000, process: nodeCpu() * 1000, postgres: (postgres() ?? Number.NaN) * 1000 });
  const start = read();
  return {
    /** Milliseconds per unit since the split was made. */
    per(units: number) {
      const end = read();
      const main = (end.main - start.main) / units;
      return { eventLoop: main, otherThreads: Math.max(0, (end.process - start.process) / units - main), postgres: (end.postgres - start.postgres) / units };
    },
  };
}

export const describeSplit = (split: CpuSplit) =>
  `CPU ms each: event loop ${split.eventLoop.toFixed(2)}, other service threads (signing, GC) ${split.otherThreads.toFixed(2)}, PostgreSQL ${Number.isNaN(split.postgres) ? 'n/a' : split.postgres.toFixed(2)}`;

export type CpuSplit = ReturnType<ReturnType<typeof cpuSplit>['per']>;

/** All the CPU of a unit: the service's threads and PostgreSQL (0 where PostgreSQL's is unknown). */
export const totalOf = (split: CpuSplit): number => split.eventLoop + split.otherThreads + (Number.isNaN(split.postgres) ? 0 : split.postgres);

/** The CPU split per run of `task`, `count` runs at `concurrency`, after a short warm-up. */
export async function cpuPer(postgres: () => number | null, count: number, concurrency: number, task: (i: number) => Promise<unknown>): Promise<CpuSplit> {
  await timed(Math.min(200, count), concurrency, task);
  const cpu = cpuSplit(postgres);
  await timed(count, concurrency, task);
  return cpu.per(count);
}

/**
 * The CPU per run of each task, `count` runs each at `concurrency`, measured in `rounds` that take
 * the tasks in turn: each task's cheapest round is kept (other load on the machine only adds to a
 * round, and alternating spreads its bursts over the tasks).
 */
export async function cpuOfParts<K extends string>(
  postgres: () => number | null,
  count: number,
  concurrency: number,
  tasks: Record<K, (i: number) => Promise<unknown>>,
  rounds = 3,
): Promise<Record<K, CpuSplit>> {
  const measures = Object.fromEntries(
    (Object.entries(tasks) as Array<[K, (i: number) => Promise<unknown>]>).map(([name, task]) => [name, () => cpuPer(postgres, Math.ceil(count / rounds), concurrency, task)]),
  ) as Record<K, () => Promise<CpuSplit>>;
  return cheapestRounds(measures, rounds);
}

/** Each measure taken `rounds` times, in turn with the others; the cheapest of each is kept (other load only adds to a round). */
export async function cheapestRounds<K extends string>(measures: Record<K, () => Promise<CpuSplit>>, rounds = 3): Promise<Record<K, CpuSplit>> {
  const best = {} as Record<K, CpuSplit>;
  for (let round = 0; round < rounds; round++) {
    for (const [name, measure] of Object.entries(measures) as Array<[K, () => Promise<CpuSplit>]>) {
      const split = await measure();
      if (!best[name] || totalOf(split) < totalOf(best[name])) best[name] = split;
    }
  }
  return best;
}

/** A command context like the one a request through the in-process client gets (src/platform/http/request-context.ts). */
export const requestLikeContext = (tenantId: string) => ({
  tenantId,
  actor: 'anonymous',
  clientIp: '127.0.0.1',
  userAgent: 'lightMyRequest',
  correlationId: randomUUID(),
  causationId: null,
});

/**
 * A token request's CPU at 32 concurrent, taken apart: the whole request, the grant handler alone,
 * the RS256 signature alone, and a bare request (GET /health/live) through the same in-process
 * client. In ms per unit (all threads and PostgreSQL): the signature, the grant beyond it, the HTTP
 * floor every request pays, and the token route's own HTTP work (the rest).
 */
export async function tokenRequestParts(
  postgres: () => number | null,
  count: number,
  app: { inject(request: { method: 'GET'; url: string }): PromiseLike<{ statusCode: number }> },
  tasks: Record<'whole' | 'grant' | 'signature', (i: number) => Promise<unknown>>,
) {
  const bare = async () => {
    if ((await app.inject({ method: 'GET', url: '/health/live' })).statusCode !== 200) throw new Error('GET /health/live failed');
  };
  const parts = await cpuOfParts(postgres, count, 32, { ...tasks, bare });
  const [whole, grant, signature, floor] = [parts.whole, parts.grant, parts.signature, parts.bare].map(totalOf) as [number, number, number, number];
  return { whole: parts.whole, grant: parts.grant, signature, grantBeyondSignature: grant - signature, floor, routeWork: whole - grant - floor };
}

/**
 * "Where the time goes" as printed lines: each part's CPU per unit (all threads and PostgreSQL),
 * its share of the whole, and the rate 2 cores could sustain at the whole's cost. Parts are
 * measured alone, so the last one is usually the whole minus the others (it can come out slightly
 * negative on a busy machine: the figures are differences of noisy counters).
 */
export function whereTheTimeGoes(unit: string, whole: CpuSplit, parts: Array<[string, number]>): string[] {
  const total = totalOf(whole);
  const width = Math.max(...parts.map(([name]) => name.length));
  return [
    `where the CPU of a ${unit} goes (${total.toFixed(3)} ms in all, of which PostgreSQL ${Number.isNaN(whole.postgres) ? 'n/a' : whole.postgres.toFixed(3)}; 2 cores sustain at most ${fmt(2000 / total)}/s at that cost):`,
    ...parts.map(([name, ms]) => `  ${name.padEnd(width)} ${ms.toFixed(3).padStart(7)} ms  ${((100 * ms) / total).toFixed(0).padStart(3)}%`),
  ];
}
