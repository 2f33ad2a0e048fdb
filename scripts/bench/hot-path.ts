/**
 * Hot-path benchmark: the paths users hit most, over real HTTP (a listening server, load from a
 * separate process), each beside GET /health/live as this machine's ceiling: password logins
 * (beside the argon2id hashes/s the server's core manages in the same run), refresh grants,
 * userinfo (GET /api/auth/validate), FGA checks and GET /api/users, with p50/p99; then bulk tuple
 * writes (100 tuples a request) and how soon the tuple read model (fga-history) has caught up with them.
 * The server runs on core 0 and the load generator on core 1 when taskset is available.
 * Usage: npm run bench:hot-path [-- --scale 1] [--rows login,refresh,userinfo,check,users,bulk]
 *   [--cpu-profile DIR] [--without-audit] [--without-check-answers] [--pairs N [--slices S] [--rate R]]: `--rows` measures only those rows (beside the
 *   ceiling, always measured); `--cpu-profile` writes each row's server CPU profile (its load window
 *   only, 200 µs sampling) to DIR; `--without-audit` turns the PERMISSION_CHECK audit of checks off
 *   (it is on by default, as in the service), to see what it costs a check; `--without-check-answers`
 *   keeps no check answers (FGA_CHECK_ANSWERS_KEPT=0): the check row's 880 questions repeat, so
 *   otherwise all but the first are kept answers, and this measures the engine's path; `--pairs N` then
 *   measures userinfo, the check and the user list N more times each, every time right after a
 *   ceiling of its own, and prints each pair's CPU share, their median and spread: a machine whose
 *   speed drifts during the run moves both halves of a pair alike; `--slices S` makes each pair S
 *   alternating slices of ceiling and row (1/S of their requests each), CPU summed per side;
 *   `--rate R` then pairs them all once more with both sides written at R requests a second (below
 *   what the generator sustains for either), printing each side's core busy beside each pair's
 *   share: the ceiling's CPU a request depends on how many requests the server finds per wake-up,
 *   which a fixed rate makes the same for both sides.
 */
import { hash } from '@node-rs/argon2';
import { OWASP_ARGON2ID } from '../../src/modules/users/passwords.ts';
import { activateDriveModel, aliceDocument, aliceTuples, appendTuples, viewerCheck } from './drive-dataset.ts';
import { httpLoad, type LoadPlan, type LoadResult } from './http-load.ts';
import { loginAccounts, pinnedBenchService, serverCpuMeter, type BenchService } from './login-accounts.ts';
import { BENCH_ADMIN, timed } from './service.ts';
import { countStatements } from './statement-counter.ts';
import { checkBenchSettings, fmt, nodeCpu, numberOption, textOption } from './support.ts';
import { cpuProfiler } from './cpu-profile.ts';

type MeasuredLoad = LoadResult & { serverUs: number; serverBusy: number; requests: number };

const scale = numberOption('scale', 1);
const rowsWanted = textOption('rows')?.split(',');
const wanted = (row: string) => !rowsWanted || rowsWanted.includes(row);
const profileDir = textOption('cpu-profile');
const pairs = numberOption('pairs', 0);
const slices = numberOption('slices', 1);
const pairRate = numberOption('rate');
const TENANT = 'platform';
const SERVER_CORE = 0;
const LOAD_CORE = 1;
const CONNECTIONS = 32;
const LOGIN_USERS = 16;

async function measure(bench: BenchService, pinned: boolean): Promise<void> {
  const { service, store, inject, db } = bench;
  const statements = countStatements();
  const admin = (await inject('POST', '/api/auth/login', BENCH_ADMIN)).data.accessToken as string;
  // Every login below starts a session that must stay alive (the refresh chains use some).
  const users = await loginAccounts(inject, admin, LOGIN_USERS);
  const sessions = await Promise.all(Array.from({ length: CONNECTIONS }, (_, i) => inject('POST', '/api/auth/login', users[i % users.length])));
  const userToken = sessions[0].data.accessToken as string;

  const modelId = await activateDriveModel(inject, admin);
  const tuples: string[] = [];
  aliceTuples((text) => tuples.push(text));
  await service.runner.waitFor(await appendTuples(store, TENANT, modelId, tuples), 60_000, ['fga-history']);
  await service.fga.indexes.storeOf(TENANT);

  await service.app.listen({ host: '127.0.0.1', port: 0 });
  const address = service.app.server.address();
  const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  const headers = (token?: string) => ({ 'x-tenant': TENANT, 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) });
  // Beside each rate, the server's CPU per request (every thread) and how busy its core was: a
  // rate ratio says how the paths compare only when the server's core was the one saturated (a
  // load generator that cannot keep up caps cheap paths first, /health/live above all); the CPU
  // ratio compares the paths' cost whatever the generator manages.
  // Each row's CPU also counts the read models catching up on the events its requests appended,
  // which would otherwise be charged to the next row (`settled: false` for a row that times that
  // catch-up itself).
  const load = async (
    path: string,
    plan: Omit<LoadPlan, 'url' | 'core' | 'concurrency' | 'requests'> & { requests: number; concurrency?: number; settled?: boolean; onStart?: () => void },
  ) => {
    const requests = Math.ceil(plan.requests * scale);
    const profile = profileDir ? await cpuProfiler() : null;
    // Counted from the first request written: the generator's start-up and connecting are not part of the row.
    let [cpuBefore, started] = [nodeCpu(), performance.now()];
    const result = await httpLoad({ concurrency: CONNECTIONS, ...plan, requests, url: `${base}${path}`, core: pinned ? LOAD_CORE : undefined }, () => {
      [cpuBefore, started] = [nodeCpu(), performance.now()];
      plan.onStart?.();
    });
    if (plan.settled !== false) await service.runner.waitFor(await store.headPosition(), 60_000);
    const cpu = nodeCpu() - cpuBefore;
    if (profile) console.log(`CPU profile of ${path}: ${await profile.stop(profileDir!, path)}`);
    return { ...result, requests, serverUs: (cpu * 1e6) / requests, serverBusy: (cpu * 1000) / (performance.now() - started) };
  };

  console.log(
    `hot-path benchmark (node ${process.version}), HTTP on 127.0.0.1, ${CONNECTIONS} connections unless noted; ` +
      (pinned ? `server on core ${SERVER_CORE}, load generator on core ${LOAD_CORE} (PostgreSQL unpinned)` : 'taskset unavailable: nothing pinned'),
  );
  const measureCeiling = (fraction = 1, rate?: number) => load('/health/live', { method: 'GET', headers: headers(), bodies: [], requests: 20_000 * fraction, rate });
  const ceiling = await measureCeiling();
  // The server's CPU (every thread: event loop, libuv pool, GC) per hash and per login, the login's
  // read models caught up: a ratio a busy machine skews far less than the rates. Beside it, where a
  // login's CPU goes: the event loop (HTTP, SQL round trips, read models, relay, reactions), the
  // other threads (argon2 and RS256 on libuv's pool, V8's GC helpers), SQL statements and
  // PostgreSQL's CPU (on any core).
  const serverCpu = await serverCpuMeter(bench, db.pool, statements);
  const rows: [string, MeasuredLoad, string?][] = [['GET /health/live (ceiling)', ceiling]];
  if (wanted('login')) {
    const hashCount = Math.ceil(40 * scale);
    const hashes = await serverCpu(hashCount, () => timed(hashCount, 4, () => hash(BENCH_ADMIN.password, OWASP_ARGON2ID)));
    const loginCount = Math.ceil(80 * scale);
    const logins = await serverCpu(loginCount, (start) => load('/api/auth/login', { headers: headers(), bodies: users.map((u) => JSON.stringify(u)), requests: 80, concurrency: 8, onStart: start }));
    rows.push([
      'POST /api/auth/login (8 connections)',
      logins.result,
      `${fmt((logins.result.perSecond / hashes.result.perSecond) * 100)}% of ${fmt(hashes.result.perSecond, 1)} argon2id hashes/s; ` +
        `server CPU ${fmt(logins.msEach, 1)} ms a login, ${fmt(hashes.msEach, 1)} ms a hash (${fmt((hashes.msEach / logins.msEach) * 100)}%); ` +
        `a login: event loop ${fmt(logins.loopMsEach, 1)} ms, other threads ${fmt(logins.msEach - logins.loopMsEach, 1)} ms, ` +
        `${fmt(logins.statementsEach, 1)} SQL statements, PostgreSQL ${fmt(logins.postgresMsEach, 1)} ms`,
    ]);
  }
  const refreshBodies = sessions.map((s) => JSON.stringify({ grant_type: 'refresh_token', refresh_token: s.data.refreshToken }));
  if (wanted('refresh')) rows.push(['POST /api/auth/token refresh_token', await load('/api/auth/token', { headers: headers(), bodies: refreshBodies, chain: { from: 'refresh_token', to: 'refresh_token' }, requests: 2_000 })]);
  const checks = Array.from({ length: 2_000 }, () => JSON.stringify(viewerCheck('alice', aliceDocument())));
  // The rows cheap enough to pair with a ceiling of their own (--pairs).
  const cheapRows: [row: string, label: string, measureRow: (fraction?: number, rate?: number) => Promise<MeasuredLoad>][] = [
    ['userinfo', 'GET /api/auth/validate (userinfo)', (fraction = 1, rate) => load('/api/auth/validate', { method: 'GET', headers: headers(userToken), bodies: [], requests: 5_000 * fraction, rate })],
    ['check', 'POST /api/fga/check (2 groups, 3 folders)', (fraction = 1, rate) => load('/api/fga/check', { headers: headers(admin), bodies: checks, requests: 10_000 * fraction, rate })],
    ['users', 'GET /api/users', (fraction = 1, rate) => load('/api/users', { method: 'GET', headers: headers(admin), bodies: [], requests: 5_000 * fraction, rate })],
  ];
  const pairedRows = cheapRows.filter(([row]) => wanted(row));
  for (const [, label, measureRow] of pairedRows) rows.push([label, await measureRow()]);

  if (wanted('bulk')) {
    // Bulk tuple writes: every request writes 100 new tuples; then how long the tuple read model (fga-history) takes to catch up.
    const bulks = Array.from({ length: Math.ceil(300 * scale) }, (_, r) =>
      JSON.stringify({ writes: Array.from({ length: 100 }, (_, i) => viewerCheck(`u${i}`, `bulk${r}-${i}`)) }),
    );
    const writes = await load('/api/fga/tuples/bulk', { headers: headers(admin), bodies: bulks, requests: bulks.length, concurrency: 8, settled: false });
    const written = performance.now();
    await service.runner.waitFor(await store.headPosition(), 120_000, ['fga-history']);
    rows.push(['POST /api/fga/tuples/bulk, 100 tuples (8 conn.)', writes, `${fmt(writes.perSecond * 100)} tuples/s; tuple read model caught up ${fmt(performance.now() - written)} ms after the last write`]);
  }

  console.log('path                                        req/s   p50 ms   p99 ms  of ceiling  failures  server µs/req  its core busy  CPU share');
  const percent = (share: number) => `${fmt(share * 100, 1)}%`;
  for (const [label, result, note] of rows) {
    console.log(
      `${label.padEnd(40)} ${fmt(result.perSecond).padStart(8)} ${fmt(result.p50, 2).padStart(8)} ${fmt(result.p99, 2).padStart(8)} ${percent(result.perSecond / ceiling.perSecond).padStart(11)} ${String(result.failures).padStart(9)}` +
        ` ${fmt(result.serverUs).padStart(14)} ${percent(result.serverBusy).padStart(14)} ${percent(ceiling.serverUs / result.serverUs).padStart(10)}` +
        (note ? `  (${note})` : ''),
    );
  }
  // A pair is `slices` alternations of a ceiling slice and a row slice (1/slices of their usual
  // requests each), the server CPU and requests summed per side: a drift of the machine's speed
  // within the pair falls on both sides alike; with `--slices 1` a pair is one ceiling then one row.
  // With a rate, both sides are written at that many requests a second (see --rate above).
  const pairing = async (rate?: number) => {
    console.log(
      `\npaired: each row's CPU share against /health/live, ${pairs} pairs a row, ` +
        (slices > 1 ? `each pair ${slices} alternating slices of ceiling and row, CPU summed per side` : 'each row right after a ceiling of its own') +
        (rate ? `; both sides at ${fmt(rate)} requests/s, each pair's share then (ceiling's core busy / row's)` : ''),
    );
    const cpuUs = (measured: MeasuredLoad) => measured.serverUs * measured.requests;
    type Side = { us: number; requests: number; ms: number };
    /** A side's sums with one more slice: server CPU (µs), requests, and the wall time its core was busy for (ms). */
    const withSlice = (side: Side, measured: MeasuredLoad): Side => ({
      us: side.us + cpuUs(measured),
      requests: side.requests + measured.requests,
      ms: side.ms + cpuUs(measured) / 1000 / measured.serverBusy,
    });
    for (const [, label, measureRow] of pairedRows) {
      const shares: number[] = [];
      const busy: string[] = [];
      for (let pair = 0; pair < pairs; pair += 1) {
        const sides = { ceiling: { us: 0, requests: 0, ms: 0 }, row: { us: 0, requests: 0, ms: 0 } };
        for (let slice = 0; slice < slices; slice += 1) {
          sides.ceiling = withSlice(sides.ceiling, await measureCeiling(1 / slices, rate));
          sides.row = withSlice(sides.row, await measureRow(1 / slices, rate));
        }
        shares.push(sides.ceiling.us / sides.ceiling.requests / (sides.row.us / sides.row.requests));
        busy.push(`${percent(sides.ceiling.us / 1000 / sides.ceiling.ms)} / ${percent(sides.row.us / 1000 / sides.row.ms)}`);
      }
      const sorted = [...shares].sort((a, b) => a - b);
      const median = sorted[Math.floor(sorted.length / 2)]!;
      const shown = rate ? shares.map((share, pair) => `${percent(share)} (${busy[pair]})`) : shares.map(percent);
      console.log(`${label.padEnd(40)} ${shown.join(', ')}; median ${percent(median)}, spread ${fmt((sorted.at(-1)! - sorted[0]!) * 100, 1)} points`);
    }
  };
  if (pairs > 0) await pairing();
  if (pairs > 0 && pairRate) await pairing(pairRate);
}

// Pinned once the embedded PostgreSQL runs: a server started from a pinned process inherits its
// core, and would then share the server's core instead of running unpinned.
pinnedBenchService(SERVER_CORE, measure, checkBenchSettings()).catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
