import { readdirSync, readFileSync } from 'node:fs';
import type { Pool } from '../../src/platform/db/pool.ts';

/** CPU seconds (user + system) of a process from /proc (Linux), or null where there is none. */
function cpuSecondsOf(pid: number): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}

/**
 * CPU seconds used so far by the PostgreSQL server (its postmaster's children). A backend that
 * exits (an idle pool connection closed) takes its counter with it, so every child is sampled
 * every 100 ms and counted at its last sample: what an exiting backend used since is missed. With
 * the process's own CPU per unit of work, this bounds the rate on a quiet machine independently of
 * the load.
 */
export async function postgresCpu(pool: Pool): Promise<() => number | null> {
  const { rows } = await pool.query<{ pid: number }>('select pg_backend_pid() as pid');
  const stat = (() => {
    try {
      return readFileSync(`/proc/${rows[0]!.pid}/stat`, 'utf8');
    } catch {
      return null;
    }
  })();
  if (!stat) return () => null;
  const postmaster = Number(stat.split(') ')[1]!.split(' ')[1]);
  const lastSeen = new Map<number, number>();
  // The postmaster's children as the kernel lists them (cheap), else a walk of /proc.
  const childrenFile = `/proc/${postmaster}/task/${postmaster}/children`;
  const children = (): number[] => {
    try {
      return readFileSync(childrenFile, 'utf8').trim().split(' ').filter(Boolean).map(Number);
    } catch {
      return readdirSync('/proc')
        .filter((entry) => /^\d+$/.test(entry))
        .filter((entry) => {
          try {
            return Number(readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]) === postmaster;
          } catch {
            return false; // the process ended meanwhile
          }
        })
        .map(Number);
    }
  };
  const sample = () => {
    for (const pid of children()) {
      const seconds = cpuSecondsOf(pid);
      if (seconds !== null) lastSeen.set(pid, seconds);
    }
  };
  sample();
  setInterval(sample, 100).unref();
  return () => {
    sample();
    let total = 0;
    for (const seconds of lastSeen.values()) total += seconds;
    return total;
  };
}

/** CPU seconds used so far by this process (server and client alike when the service runs in it). */
export const nodeCpu = (): number => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
};

