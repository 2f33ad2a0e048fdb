import { randomUUID } from 'node:crypto';
import { gcPauses } from './gc-pauses.ts';
import { httpLoad, type LoadPlan, type LoadResult } from './http-load.ts';
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

/** The CPU split per run of `task`, `count` runs at `concurrency`, after a short warm-up, counted until `settle` (if any) has resolved. */
export async function cpuPer(
  postgres: () => number | null,
  count: number,
  concurrency: number,
  task: (i: number) => Promise<unknown>,
  settle?: () => Promise<unknown>,
): Promise<CpuSplit> {
  await timed(Math.min(200, count), concurrency, task);
  await settle?.();
  const cpu = cpuSplit(postgres);
  await timed(count, concurrency, task);
  await settle?.();
  return cpu.per(count);
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

/** An app that can listen (the bench service's fastify instance). */
interface Listening {
  listen(options: { host: string; port: number }): Promise<unknown>;
  server: { address(): unknown };
}

/** A load over sockets to a path of the listening service (LoadPlan without the URL). */
export type PathLoad = Omit<LoadPlan, 'url'> & { path: string };

type GcPauses = ReturnType<ReturnType<typeof gcPauses>['stop']>;

/**
 * The service listening on 127.0.0.1, and loads sent to it from the lean generator's own process
 * (http-load.ts), each with the server's CPU per request: every thread of this process (the server)
 * and PostgreSQL, counted from the first request written until `settle` has resolved (the read
 * models' catch-up on what the requests appended, which would otherwise run into the next load),
 * and the event loop's GC pauses.
 */
export async function socketLoads(app: Listening, postgres: () => number | null, settle: () => Promise<unknown> = async () => {}) {
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address() as { port: number } | null;
  const base = `http://127.0.0.1:${address?.port ?? 0}`;
  const measured = async (plan: PathLoad): Promise<{ result: LoadResult; server: CpuSplit; gc: GcPauses }> => {
    let cpu: ReturnType<typeof cpuSplit> | null = null;
    let pauses: ReturnType<typeof gcPauses> | null = null;
    const result = await httpLoad({ ...plan, url: `${base}${plan.path}` }, () => {
      cpu = cpuSplit(postgres);
      pauses = gcPauses();
    });
    await settle();
    const server = cpu!.per(plan.requests);
    const gc = pauses!.stop(plan.requests);
    if (result.failures > 0) throw new Error(`${plan.path}: ${result.failures} of ${plan.requests} answers were not 200`);
    return { result, server, gc };
  };
  return { base, measured };
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
