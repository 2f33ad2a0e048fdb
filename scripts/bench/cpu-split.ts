import { readFileSync } from 'node:fs';

/** CPU milliseconds of one thread from its /proc stat line (utime + stime, in clock ticks of 10 ms). */
function statCpuMs(file: string): number {
  try {
    const fields = readFileSync(file, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0; // not Linux
  }
}

/**
 * Where a benchmark's CPU went, per unit of work (Linux /proc, 10 ms resolution: use a few thousand
 * units): this process's event loop (the main thread), its other threads (libuv's pool, where RS256
 * signatures run, and V8's GC helpers), and the PostgreSQL server (`postgres`: postgresCpu's
 * counter, in seconds). CPU time, unlike a rate, is barely skewed by other load on the machine.
 */
export function cpuSplit(postgres: () => number | null) {
  const read = () => {
    const { user, system } = process.cpuUsage();
    return { main: statCpuMs(`/proc/self/task/${process.pid}/stat`), process: (user + system) / 1000, postgres: (postgres() ?? Number.NaN) * 1000 };
  };
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

export const describeSplit = (split: ReturnType<ReturnType<typeof cpuSplit>['per']>) =>
  `CPU ms each: event loop ${split.eventLoop.toFixed(2)}, other service threads (signing, GC) ${split.otherThreads.toFixed(2)}, PostgreSQL ${Number.isNaN(split.postgres) ? 'n/a' : split.postgres.toFixed(2)}`;
