/**
 * Appends LoginFailed events (tenant `platform`) at a steady rate from a child process of its own,
 * on its own pool, as another service instance would: the benchmarked service sees them through
 * the event store's LISTEN/NOTIFY, and its CPU figures leave the generator out.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { systemClock } from '../../src/platform/clock.ts';
import { systemContext } from '../../src/platform/commands/context.ts';
import { toNewEvents } from '../../src/platform/commands/handle-command.ts';
import { createPool } from '../../src/platform/db/pool.ts';
import { PostgresEventStore } from '../../src/platform/eventstore/postgres.ts';
import { newId } from '../../src/platform/ids.ts';

const CHILD_FLAG = 'IAM_BENCH_EVENT_GENERATOR';
const TICK_MS = 20;

export interface GeneratorPlan {
  databaseUrl: string;
  rate: number;
  total: number;
  /** Events appended together, in one transaction (one append of `burst` streams); 0: one append each, `rate`/50 at a time. */
  burst?: number;
}

export interface GeneratorResult {
  appended: number;
  seconds: number;
  cpuMs: number;
}

/** Appends `plan.total` events at `plan.rate` per second in a child process; resolves when all are committed. */
export function generateEvents(plan: GeneratorPlan): Promise<GeneratorResult> {
  const child = fork(fileURLToPath(import.meta.url), [], { execArgv: ['--import', 'tsx'], env: { ...process.env, [CHILD_FLAG]: '1' } });
  return new Promise((resolve, reject) => {
    child.once('message', (result) => resolve(result as GeneratorResult));
    child.once('error', reject);
    child.once('exit', (code) => code !== 0 && reject(new Error(`the event generator exited with ${code}`)));
    child.send(plan);
  });
}

async function run({ databaseUrl, rate, total, burst = 0 }: GeneratorPlan): Promise<GeneratorResult> {
  const pool = createPool(databaseUrl, 20);
  const store = new PostgresEventStore(pool, { pollIntervalMs: 200 });
  const context = systemContext('platform');
  const cpuBefore = process.cpuUsage();
  const perTick = Math.max(1, Math.round((rate * TICK_MS) / 1000));
  const started = performance.now();
  const appends: Promise<unknown>[] = [];
  const loginFailed = () => toNewEvents([{ type: 'LoginFailed', data: { userId: null, reason: 'bad_password' } }], context, systemClock);
  for (let appended = 0; appended < total; ) {
    if (burst > 0) {
      const streams = Math.min(burst, total - appended);
      appends.push(store.appendMulti(Array.from({ length: streams }, () => ({ streamId: `loginattempt-platform.${newId()}`, events: loginFailed(), expectedRevision: 'any' as const }))));
      appended += streams;
    } else {
      for (let i = 0; i < perTick && appended < total; i++, appended++) appends.push(store.append(`loginattempt-platform.${newId()}`, loginFailed()));
    }
    const due = started + (appended / rate) * 1000;
    await sleep(Math.max(0, due - performance.now()));
  }
  await Promise.all(appends);
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  await store.close();
  await pool.end();
  return { appended: total, seconds, cpuMs: (cpu.user + cpu.system) / 1000 };
}

if (process.env[CHILD_FLAG] && process.send) {
  process.once('message', (plan) => {
    void run(plan as GeneratorPlan).then((result) => process.send!(result, () => process.exit(0)));
  });
}
