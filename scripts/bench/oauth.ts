/**
 * OAuth benchmark: client_credentials tokens per second (RS256) at 1, 8, 32 and 64 concurrent and authorization_code exchanges
 * per second (with PKCE, ID token and refresh rotation), over in-process HTTP (fastify inject),
 * plus where a client_credentials token's CPU goes (the whole request against its signature, the
 * grant alone and a bare request, each at 32 concurrent) and RS256 signing strategies compared.
 * Usage: npm run bench:oauth [-- --tokens 3000 --codes 300 --signs 1000]
 */
import { createHash, randomBytes } from 'node:crypto';
import { availableParallelism, loadavg } from 'node:os';
import { applicationByClientId, cachedApplications, secretMatches } from '../../src/modules/applications/index.ts';
import { cachedSettings, settingsQueries } from '../../src/modules/settings/index.ts';
import { BENCH_ADMIN, benchService, timed } from './service.ts';
import { cpuPer, cpuSplit, describeSplit, requestLikeContext, tokenRequestParts, whereTheTimeGoes } from './cpu-split.ts';
import { compareSigners } from './signing-costs.ts';
import { fmt, numberOption, postgresCpu } from './support.ts';

const TOKENS = numberOption('tokens', 3000);
const CODES = numberOption('codes', 300);
const SIGNS = numberOption('signs', 1000);
const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');
const REDIRECT = 'https://bench.example/cb';

type Bench = Awaited<ReturnType<typeof benchService>>;

async function main(): Promise<void> {
  const bench = await benchService({ ARGON2_MEMORY_KIB: '1024', ARGON2_ITERATIONS: '1' });
  try {
    await run(bench);
  } finally {
    await bench.close();
  }
}

const form = (bench: Bench, params: Record<string, string>) =>
  bench.service.app.inject({ method: 'POST', url: '/api/auth/token', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams(params).toString() });

async function run(bench: Bench): Promise<void> {
  const { inject, service, store, db } = bench;
  const admin = (await inject('POST', '/api/auth/login', BENCH_ADMIN)).data.accessToken;
  // Every code is a sign-in of the same user: the session limit would end the older ones.
  await inject('PUT', '/api/realm-settings', { section: 'login', data: { maxConcurrentSessions: 0 } }, admin);
  const m2m = (await inject('POST', '/api/applications', { name: 'bench-m2m', type: 'm2m', scopes: ['manage:users', 'view:audit'] }, admin)).data;
  const web = (await inject('POST', '/api/applications', { name: 'bench-web', type: 'web', redirectUris: [REDIRECT] }, admin)).data;
  console.log(`oauth benchmark (node ${process.version}, ${service.keyRing.alg}, ${availableParallelism()} cores, UV_THREADPOOL_SIZE ${process.env.UV_THREADPOOL_SIZE ?? 4}), in-process HTTP (fastify inject), load average before: ${load()}`);

  const basic = `Basic ${Buffer.from(`${m2m.clientId}:${m2m.clientSecret}`).toString('base64')}`;
  const clientCredentials = async () => {
    const answer = await service.app.inject({
      method: 'POST',
      url: '/api/auth/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic },
      payload: 'grant_type=client_credentials&scope=manage%3Ausers',
    });
    if (answer.statusCode !== 200) throw new Error(answer.body);
  };
  await timed(200, 8, clientCredentials); // warm-up
  const postgres = await postgresCpu(db.pool);
  for (const concurrency of [1, 8, 32, 64]) {
    const cpu = cpuSplit(postgres);
    const result = await timed(TOKENS, concurrency, clientCredentials);
    console.log(`client_credentials tokens, ${String(concurrency).padStart(2)} concurrent: ${fmt(result.perSecond)}/s, p50 ${fmt(result.p50, 2)} ms, p99 ${fmt(result.p99, 2)} ms (load ${load()})`);
    console.log(`  ${describeSplit(cpu.per(TOKENS))}`);
  }
  console.log('  (the event loop includes the in-process client\'s side; 2 cores give at most 2,000 ms of CPU per second: 1,500 tokens/s needs at most 1.33 ms each in all)');

  // Where the time goes: the whole request against its parts, each at 32 concurrent and measured
  // the same way (CPU of every thread and of PostgreSQL per token).
  // The command context the token route gives the grant (request metadata included: it is written with each event).
  const context = requestLikeContext('platform');
  const params = { grant_type: 'client_credentials', scope: 'manage:users', client_id: m2m.clientId, client_secret: m2m.clientSecret, client_auth_method: 'client_secret_basic' };
  const parts = await tokenRequestParts(postgres, TOKENS, service.app, {
    whole: clientCredentials,
    grant: () => service.grants.client_credentials!.handle(params, 'platform', context),
    signature: () => service.tokens.issue({ sub: m2m.clientId, client_id: m2m.clientId, tid: 'platform', roles: [], acr: '0', amr: [], scope: 'manage:users' }, 900),
  });
  console.log(
    whereTheTimeGoes('client_credentials token (32 concurrent; each part its cheapest of 3 rounds)', parts.whole, [
      ['RS256 signature: claims, JSON, base64url, sign on libuv\'s pool (TokenService.issue)', parts.signature],
      ['the grant beyond it: client, secret, scopes, settings (grant alone - signature)', parts.grantBeyondSignature],
      ['HTTP floor: in-process client, fastify, global hooks (GET /health/live)', parts.floor],
      ['the token route\'s HTTP work: form, schemas, Basic, tenant (the rest)', parts.routeWork],
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
  const exchange = async (i: number) => {
    const { code, verifier } = codes[i]!;
    const answer = await form(bench, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier, client_id: web.clientId, client_secret: web.clientSecret });
    if (answer.statusCode !== 200) throw new Error(answer.body);
  };
  const cpu = cpuSplit(postgres);
  const exchanges = await timed(CODES, 8, exchange);
  console.log(`authorization_code exchanges, 8 concurrent: ${fmt(exchanges.perSecond)}/s, p50 ${fmt(exchanges.p50, 1)} ms, p99 ${fmt(exchanges.p99, 1)} ms`);
  console.log(`  ${describeSplit(cpu.per(CODES))}`);
  console.log(`load average after: ${load()}`);
}

await main();
