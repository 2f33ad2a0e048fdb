/**
 * Login benchmark: bench:hot-path's login row alone, repeated, with where a login's CPU goes. The
 * server on core 0 (every thread), the load generator on core 1; argon2id hashes on libuv's pool
 * (the limit, measured twice: 4 at once, and one per core of the process at once), then rounds of
 * password logins over HTTP (8 connections, 16 accounts), each as a share of both limits, with the
 * server's CPU a login (event loop and other threads; each thread's with `--threads`), PostgreSQL's, and the SQL
 * statements a login sends (the most frequent listed with `--statements`) and the WAL bytes it makes PostgreSQL write. `--breakdown` adds a
 * round under the CPU profiler (200 µs sampling) and prints where its event loop's CPU went, by
 * component (scripts/bench/cpu-breakdown.ts); `--profile <file>` also keeps that round's profile.
 * Usage: npm run bench:logins [-- --rounds 3 --logins 80 --hashes 40 --threads --statements --breakdown --profile /tmp/logins.cpuprofile]
 */
import { hash } from '@node-rs/argon2';
import { readFileSync, renameSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { OWASP_ARGON2ID } from '../../src/modules/users/passwords.ts';
import { describeBreakdown, type CpuProfile } from './cpu-breakdown.ts';
import { cpuProfiler } from './cpu-profile.ts';
import { httpLoad } from './http-load.ts';
import { loginAccounts, pinnedBenchService, serverCpuMeter, type BenchService } from './login-accounts.ts';
import { BENCH_ADMIN, timed } from './service.ts';
import { countStatements } from './statement-counter.ts';
import { fmt, numberOption, textOption } from './support.ts';

const ROUNDS = numberOption('rounds', 3);
const LOGINS = numberOption('logins', 80);
const HASHES = numberOption('hashes', 40);
const LOGIN_USERS = 16;
const PROFILE = textOption('profile');

/** The threads that used CPU, each with its ms a unit (the process's id first: the event loop). */
const describeThreads = (threads: Array<{ tid: number; name: string; msEach: number }>) =>
  '  threads, ms each: ' +
  threads
    .filter((thread) => thread.msEach >= 0.05)
    .map(({ tid, name, msEach }) => `${tid === process.pid ? 'event loop' : `${name} ${tid - process.pid}`} ${fmt(msEach, 2)}`)
    .join(', ');

async function measure(bench: BenchService, pinned: boolean): Promise<void> {
  const { service, inject, db } = bench;
  const statements = countStatements();
  const admin = (await inject('POST', '/api/auth/login', BENCH_ADMIN)).data.accessToken as string;
  const users = await loginAccounts(inject, admin, LOGIN_USERS);
  await Promise.all(users.map((user) => inject('POST', '/api/auth/login', user)));
  await service.app.listen({ host: '127.0.0.1', port: 0 });
  const address = service.app.server.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/api/auth/login`;
  const headers = { 'x-tenant': 'platform', 'content-type': 'application/json' };
  console.log(
    `login benchmark (node ${process.version}, UV_THREADPOOL_SIZE ${process.env.UV_THREADPOOL_SIZE ?? 'default'}), ` +
      (pinned ? 'server on core 0, load generator on core 1 (PostgreSQL unpinned)' : 'taskset unavailable: nothing pinned'),
  );
  const serverCpu = await serverCpuMeter(bench, db.pool, statements);
  // The limit two ways, on libuv's pool: 4 hashes at once (the limit of sessions 9 to 16), and one
  // per core of this process at once (the most a core hashes: more at once evict each other's memory).
  const limits: Array<[string, number]> = [];
  const limitRuns = [
    ['4 at once', 4],
    ['1 a core', availableParallelism()],
  ] as const;
  for (const [name, concurrency] of HASHES > 0 ? limitRuns : []) {
    // Not counted: the process's first hashes at a concurrency cost up to a third more each (the
    // threads' first large allocations), and whether the service's own hashes (the set-up's logins)
    // ran at this concurrency before must not move the limit.
    await timed(2 * concurrency, concurrency, () => hash(BENCH_ADMIN.password, OWASP_ARGON2ID));
    const hashes = await serverCpu(HASHES, () => timed(HASHES, concurrency, () => hash(BENCH_ADMIN.password, OWASP_ARGON2ID)));
    limits.push([name, hashes.result.perSecond]);
    console.log(`argon2id, ${name}: ${fmt(hashes.result.perSecond, 1)} hashes/s, server CPU ${fmt(hashes.msEach, 1)} ms a hash`);
    if (process.argv.includes('--threads')) console.log(describeThreads(hashes.threads));
  }
  const round = async (label: string) => {
    const logins = await serverCpu(LOGINS, (start) =>
      httpLoad({ url, headers, bodies: users.map((u) => JSON.stringify(u)), requests: LOGINS, concurrency: 8, core: pinned ? 1 : undefined }, start),
    );
    console.log(
      `${label}: ${fmt(logins.result.perSecond, 1)} logins/s (${limits.map(([name, limit]) => `${fmt((100 * logins.result.perSecond) / limit)}% of ${name}`).join(', ')}) ` +
        `(${logins.result.failures} failed), p50 ${fmt(logins.result.p50)} ms; ` +
        `server CPU ${fmt(logins.msEach, 1)} ms a login (event loop ${fmt(logins.loopMsEach, 2)}, other threads ${fmt(logins.msEach - logins.loopMsEach, 1)}), ` +
        `PostgreSQL ${fmt(logins.postgresMsEach, 2)} ms, ${fmt(logins.statementsEach, 1)} SQL statements, ${fmt(logins.walEach)} WAL bytes`,
    );
    if (process.argv.includes('--threads')) console.log(describeThreads(logins.threads));
    if (process.argv.includes('--statements')) console.log(statements.top(LOGINS, 30).join('\n'));
    return logins;
  };
  for (let n = 1; n <= ROUNDS; n += 1) await round(`round ${n}`);
  // The profiled round comes last, apart: the sampler costs CPU the measured rounds should not carry.
  if (PROFILE || process.argv.includes('--breakdown')) {
    const profiler = await cpuProfiler();
    const logins = await round('profiled round');
    const file = await profiler.stop(tmpdir(), `logins-${process.pid}`);
    const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
    if (PROFILE) renameSync(file, PROFILE);
    else rmSync(file);
    console.log(describeBreakdown(profile, logins.loopMsEach, 'login').join('\n'));
  }
}

pinnedBenchService(0, measure).catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
