/**
 * OAuth benchmark over real sockets: the service listens on 127.0.0.1 (this process, every thread of
 * it counted as the server) and a lean load generator in its own process (http-load.ts) sends
 * client_credentials token requests (RS256) at 8, 32, 64 and 128 concurrent keep-alive
 * connections, then authorization_code exchanges (with PKCE, ID token and refresh rotation). Beside
 * each rate: the server's CPU per token (event loop, other threads: libuv's pool signs, GC) and the
 * generator's. Then where a client_credentials token's CPU goes (the whole request against its
 * signature, the grant alone and a bare request, GET /health/live) and RS256 signing strategies.
 * Usage: npm run bench:oauth [-- --tokens 4000 --codes 300 --signs 1000 --profile token.cpuprofile --pool-nice 10]
 * (--profile: a CPU profile of the server's threads' JS, sampled every 200 µs, during the 64-concurrent token run;
 * --pool-nice: THREAD_POOL_NICE, the nice value of the server's libuv pool threads, which sign; 0: as the event loop.)
 */
import { createHash, randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { availableParallelism, loadavg } from 'node:os';
import { applicationByClientId, cachedApplications, secretMatches } from '../../src/modules/applications/index.ts';
import { cachedSettings, settingsQueries } from '../../src/modules/settings/index.ts';
import { BENCH_ADMIN, benchService } from './service.ts';
import { cheapestRounds, cpuPer, describeSplit, requestLikeContext, socketLoads, totalOf, whereTheTimeGoes } from './cpu-split.ts';
import { compareSigners } from './signing-costs.ts';
import { fmt, numberOption, postgresCpu, textOption } from './support.ts';

const TOKENS = numberOption('tokens', 4000);
const CODES = numberOption('codes', 300);
const SIGNS = numberOption('signs', 1000);
const PROFILE = textOption('profile');
const POOL_NICE = numberOption('pool-nice');
const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');
const REDIRECT = 'https://bench.example/cb';

type Bench = Awaited<ReturnType<typeof benchService>>;

async function main(): Promise<void> {
  const bench = await benchService({ ARGON2_MEMORY_KIB: '1024', ARGON2_ITERATIONS: '1', ...(POOL_NICE === undefined ? {} : { THREAD_POOL_NICE: String(POOL_NICE) }) });
  try {
    await run(bench);
  } finally {
    await bench.close();
  }
}

/** A CPU profile of this process's JavaScript (200 µs sampling) while `work` runs, written to `file`. */
async function profiled<T>(file: string, work: () => Promise<T>): Promise<T> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  await session.post('Profiler.start');
  try {
    return await work();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    await writeFile(file, JSON.stringify(profile));
    session.disconnect();
    console.log(`  CPU profile of that run written to ${file}`);
  }
}

async function run(bench: Bench): Promise<void> {
  const { inject, service, store, db } = bench;
  const admin = (await inject('POST', '/api/auth/login', BENCH_ADMIN)).data.accessToken;
  // Every code is a sign-in of the same user: the session limit would end the older ones.
  await inject('PUT', '/api/realm-settings', { section: 'login', data: { maxConcurrentSessions: 0 } }, admin);
  const m2m = (await inject('POST', '/api/applications', { name: 'bench-m2m', type: 'm2m', scopes: ['manage:users', 'view:audit'] }, admin)).data;
  const web = (await inject('POST', '/api/applications', { name: 'bench-web', type: 'web', redirectUris: [REDIRECT] }, admin)).data;
  const postgres = await postgresCpu(db.pool);
  const { base, measured } = await socketLoads(service.app, postgres);
  console.log(
    `oauth benchmark (node ${process.version}, ${service.keyRing.alg}, ${availableParallelism()} cores, UV_THREADPOOL_SIZE ${process.env.UV_THREADPOOL_SIZE ?? 4} at nice ${POOL_NICE ?? 'THREAD_POOL_NICE (10 unless set)'}), ` +
      `HTTP/1.1 on ${base}, load generator in its own process, nothing pinned; load average before: ${load()}`,
  );

  const basic = `Basic ${Buffer.from(`${m2m.clientId}:${m2m.clientSecret}`).toString('base64')}`;
  const tokenLoad = (concurrency: number, requests = TOKENS) =>
    measured({
      path: '/api/auth/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic },
      bodies: ['grant_type=client_credentials&scope=manage%3Ausers'],
      concurrency,
      requests,
    });
  const liveLoad = (concurrency: number, requests = TOKENS) => measured({ path: '/health/live', method: 'GET', headers: {}, bodies: [], concurrency, requests });

  // Warm-up until the JIT has settled: after 500 requests TurboFan's threads still took 14% of the
  // process's CPU (perf, 8,000 tokens), which a long-running server does not pay per token.
  await tokenLoad(32, 3000);
  await liveLoad(32, 2000);
  for (const concurrency of [8, 32, 64, 128]) {
    const { result, server, gc } = await (PROFILE && concurrency === 64 ? profiled(PROFILE, () => tokenLoad(concurrency)) : tokenLoad(concurrency));
    const serverMs = totalOf(server);
    console.log(
      `client_credentials tokens, ${String(concurrency).padStart(3)} connections: ${fmt(result.perSecond)}/s, p50 ${fmt(result.p50, 2)} ms, p99 ${fmt(result.p99, 2)} ms (load ${load()})`,
    );
    console.log(
      `  server ${serverMs.toFixed(3)} ms of CPU a token (${describeSplit(server)}); load generator ${fmt(result.generatorUs)} µs a request; ` +
        `2 cores bound: ${fmt(2000 / serverMs)}/s for the server alone, ${fmt(2000 / (serverMs + result.generatorUs / 1000))}/s with the generator`,
    );
    console.log(`  GC pauses of the event loop (wall time): ${fmt(gc.msPer * 1000, 1)} µs a token (${gc.scavenges} scavenges, ${gc.markCompacts} mark-compacts)`);
    // How much of the 2 cores the row kept busy: under the bound, the shortfall is idle time, not cost.
    const busy = (result.perSecond * (serverMs + result.generatorUs / 1000)) / 1000;
    console.log(`  cores busy: ${busy.toFixed(2)} of ${availableParallelism()} (server ${((result.perSecond * serverMs) / 1000).toFixed(2)}, generator ${((result.perSecond * result.generatorUs) / 1e6).toFixed(2)})`);
  }
  console.log('  (2 cores give at most 2,000 ms of CPU a second: 1,500 tokens/s needs at most 1.33 ms a token, server and client together)');

  // Where the time goes: the whole request against its parts, each measured the same way (CPU of
  // every thread of the server and of PostgreSQL per token), each its cheapest of 3 rounds.
  // The command context the token route gives the grant (request metadata included: it is written with each event).
  const context = requestLikeContext('platform');
  const params = { grant_type: 'client_credentials', scope: 'manage:users', client_id: m2m.clientId, client_secret: m2m.clientSecret, client_auth_method: 'client_secret_basic' };
  const perPart = Math.ceil(TOKENS / 3);
  const parts = await cheapestRounds({
    whole: async () => (await tokenLoad(32, perPart)).server,
    grant: () => cpuPer(postgres, perPart, 32, () => service.grants.client_credentials!.handle(params, 'platform', context)),
    signature: () =>
      cpuPer(postgres, perPart, 32, () =>
        service.tokens.issue({ sub: m2m.clientId, client_id: m2m.clientId, tid: 'platform', roles: [], acr: '0', amr: [], scope: 'manage:users' }, 900),
      ),
    floor: async () => (await liveLoad(32, perPart)).server,
  });
  const [whole, grant, signature, floor] = [parts.whole, parts.grant, parts.signature, parts.floor].map(totalOf) as [number, number, number, number];
  console.log(
    whereTheTimeGoes('client_credentials token (server CPU, 32 connections; each part its cheapest of 3 rounds)', parts.whole, [
      ['RS256 signature: claims, JSON, base64url, sign on libuv\'s pool (TokenService.issue)', signature],
      ['the grant beyond it: client, secret, scopes, settings (grant alone - signature)', grant - signature],
      ['HTTP floor: sockets, HTTP parsing, fastify, global hooks (GET /health/live)', floor],
      ['the token route\'s HTTP work: form, schemas, Basic, tenant, answer (the rest)', whole - grant - floor],
    ]).join('\n'),
  );

  // The grant's steps alone, sequentially: CPU of the whole process per step.
  const applications = cachedApplications(service.runner, store);
  const settings = cachedSettings(service.runner, settingsQueries(db.pool));
  const secretHash = (await applicationByClientId(store, 'platform', m2m.clientId))!.secretHash;
  const steps: Record<string, () => Promise<unknown>> = {
    'client lookup, warm (application cache, in use)': () => applications.byClientId('platform', m2m.clientId),
    'client lookup, cold (application stream read + fold)': () => applicationByClientId(store, 'platform', m2m.clientId),
    'client secret check (SHA-256, constant-time compare)': async () => secretMatches(m2m.clientSecret, secretHash),
    'tenant settings (settings cache, in use)': () => settings.nested('platform'),
  };
  console.log('the grant\'s steps (each alone, sequentially; CPU of this process per step):');
  for (const [name, step] of Object.entries(steps)) {
    const { eventLoop, otherThreads } = await cpuPer(() => null, 1000, 1, step);
    console.log(`  ${name.padEnd(60)} ${(eventLoop + otherThreads).toFixed(3)} ms each`);
  }
  console.log('  no event is appended per client_credentials token (docs/oauth.md)');
  await compareSigners(SIGNS);
  console.log(`load average: ${load()}`);

  // Authorization codes: signed in beforehand (the sign-in is a password login), then exchanged.
  const codes: Array<{ code: string; verifier: string }> = [];
  for (let i = 0; i < CODES; i++) {
    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const query = new URLSearchParams({ response_type: 'code', client_id: web.clientId, redirect_uri: REDIRECT, scope: 'openid profile email', state: `s${i}`, code_challenge: challenge, code_challenge_method: 'S256' });
    const page = await service.app.inject({ method: 'GET', url: `/api/oauth/authorize?${query}` });
    const field = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(page.body)![1]!.replace(/&#(\d+);/g, (_m, c) => String.fromCharCode(Number(c)));
    const cookie = String(page.headers['set-cookie']).split(';')[0]!;
    const answer = await service.app.inject({
      method: 'POST',
      url: '/api/oauth/authenticate',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
      payload: new URLSearchParams({ request_id: field('request_id'), csrf: field('csrf'), ...BENCH_ADMIN }).toString(),
    });
    codes.push({ code: new URL(String(answer.headers.location)).searchParams.get('code')!, verifier });
  }
  const exchanges = await measured({
    path: '/api/auth/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    bodies: codes.map(({ code, verifier }) =>
      new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier, client_id: web.clientId, client_secret: web.clientSecret }).toString(),
    ),
    concurrency: 8,
    requests: CODES,
  });
  console.log(`authorization_code exchanges, 8 connections: ${fmt(exchanges.result.perSecond)}/s, p50 ${fmt(exchanges.result.p50, 1)} ms, p99 ${fmt(exchanges.result.p99, 1)} ms`);
  console.log(`  server: ${describeSplit(exchanges.server)}; load generator ${fmt(exchanges.result.generatorUs)} µs a request`);
  console.log(`load average after: ${load()}`);
}

await main();
