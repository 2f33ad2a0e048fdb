import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import pino from 'pino';
import { startEmbeddedPostgres } from '../../src/platform/db/embedded-postgres.ts';
import { migratePool } from '../../src/platform/db/migrate.ts';
import { createPool, type Pool } from '../../src/platform/db/pool.ts';

/** A fresh, migrated database for one benchmark run: DATABASE_URL's server, or an embedded one. */
export async function benchDatabase(): Promise<{ pool: Pool; url: string; close(): Promise<void> }> {
  // Another port lets two benchmarks run side by side.
  const port = Number(process.env.BENCH_POSTGRES_PORT ?? 54349);
  const embedded = process.env.DATABASE_URL
    ? null
    : await startEmbeddedPostgres({ dataDir: path.resolve(`.tmp/bench-${port}`), port, database: 'postgres', logger: pino({ level: 'warn' }) });
  const adminUrl = process.env.DATABASE_URL ?? embedded!.url;
  const name = `bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const pool = createPool(url.toString(), 50);
  await migratePool(pool);
  return {
    pool,
    url: url.toString(),
    async close() {
      await pool.end();
      await admin.query(`drop database ${name} with (force)`);
      await admin.end();
      await embedded?.stop();
    },
  };
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export const fmt = (n: number, digits = 0): string => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** `--name <number>` from the command line, or `fallback` (undefined without one). */
export function numberOption(name: string, fallback: number): number;
export function numberOption(name: string): number | undefined;
export function numberOption(name: string, fallback?: number): number | undefined {
  const flag = process.argv.indexOf(`--${name}`);
  return flag > 0 ? Number(process.argv[flag + 1]) : fallback;
}

/** `--name 1,2,3` from the command line as numbers, or `fallback`. */
export const numberListOption = (name: string, fallback: number[]): number[] => textOption(name)?.split(',').map(Number) ?? fallback;

/** `--name <text>` from the command line, or null. */
export const textOption = (name: string): string | null => {
  const flag = process.argv.indexOf(`--${name}`);
  return flag > 0 ? (process.argv[flag + 1] ?? null) : null;
};

/** A /proc stat line (proc(5)): the command's name, and the fields after it, `state` first. */
function procStat(path: string): { name: string; fields: string[] } {
  const stat = readFileSync(`/proc/${path}/stat`, 'utf8');
  const close = stat.lastIndexOf(') ');
  return { name: stat.slice(stat.indexOf('(') + 1, close), fields: stat.slice(close + 2).split(' ') };
}

/** utime + stime of a stat line's fields, in seconds, with its reaped children's (cutime + cstime) when asked. */
const cpuSecondsIn = (fields: string[], reaped = false): number =>
  (Number(fields[11]) + Number(fields[12]) + (reaped ? Number(fields[13]) + Number(fields[14]) : 0)) / 100;

/** CPU seconds (user + system; with `reaped`, also of its ended children) of a process (or `pid/task/tid`: a thread) from /proc (Linux), or null where there is none. */
function cpuSecondsOf(pid: number | string, reaped = false): number | null {
  try {
    return cpuSecondsIn(procStat(String(pid)).fields, reaped);
  } catch {
    return null;
  }
}

/**
 * CPU seconds used so far by the PostgreSQL server: the postmaster with the children it reaped
 * (autovacuum workers come and go) and its running children (the pool's backends). With the
 * process's own CPU per event, this bounds the rate on a quiet machine independently of the load.
 */
/** The WAL PostgreSQL writes from now on (bytes, background work included): a figure a loaded machine does not skew. */
export async function walBytes(pool: Pool): Promise<() => Promise<number>> {
  const { rows } = await pool.query<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn');
  return async () => Number((await pool.query<{ bytes: string }>('select pg_wal_lsn_diff(pg_current_wal_lsn(), $1) as bytes', [rows[0]!.lsn])).rows[0]!.bytes);
}

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
  return () => {
    let total = cpuSecondsOf(postmaster, true) ?? 0;
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        if (Number(procStat(entry).fields[1]) === postmaster) total += cpuSecondsOf(Number(entry)) ?? 0;
      } catch {
        // the process ended meanwhile
      }
    }
    return total;
  };
}

/** CPU seconds (user + system) used so far by this process. */
export const nodeCpu = (): number => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
};

/**
 * CPU seconds (user + system) used so far by each thread of this process, by thread id, with its
 * name (/proc/self/task; Linux, empty elsewhere). Node names libuv's pool threads `libuv-worker`
 * and every other thread `node`: the main thread's id is the process's, V8's platform workers
 * (GC helpers, concurrent compilation) come next in id order.
 */
export function threadCpu(): Map<number, { name: string; seconds: number }> {
  const threads = new Map<number, { name: string; seconds: number }>();
  let tids: string[] = [];
  try {
    tids = readdirSync('/proc/self/task');
  } catch {
    return threads;
  }
  for (const tid of tids) {
    try {
      const { name, fields } = procStat(`self/task/${tid}`);
      threads.set(Number(tid), { name, seconds: cpuSecondsIn(fields) });
    } catch {
      // the thread ended meanwhile
    }
  }
  return threads;
}

/** CPU seconds (user + system) used so far by this process's main thread, i.e. its event loop (from /proc), or null where there is none. */
export const eventLoopCpu = (): number | null => cpuSecondsOf(`${process.pid}/task/${process.pid}`);

/**
 * The service's settings the FGA check benches take from their flags: `--without-audit` turns the
 * PERMISSION_CHECK audit off, `--without-check-answers` keeps no check answers (every check evaluated).
 */
export const checkBenchSettings = (): Record<string, string> => ({
  ...(process.argv.includes('--without-audit') ? { AUDIT_PERMISSION_CHECKS: 'false' } : {}),
  ...(process.argv.includes('--without-check-answers') ? { FGA_CHECK_ANSWERS_KEPT: '0' } : {}),
});
