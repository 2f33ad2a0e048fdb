/**
 * Sessions benchmark: refresh-token grants per second over real sockets (the service listens on
 * 127.0.0.1; the lean load generator, http-load.ts, runs in its own process and chains each
 * connection's rotated refresh token into its next request) at 8, 32 and 64 connections (or `--connections`), each with
 * the server's CPU per grant (event loop, other threads: libuv's pool signs, GC; PostgreSQL),
 * counted until the read models have applied what the grants appended, SQL statements and WAL bytes
 * per grant, and the event loop's busy share over the row. Then where a grant's CPU goes (the whole request and GET /health/live over sockets,
 * the grant handler and the signature in-process), and GET /api/admin/sessions latency with
 * 100,000 sessions in one tenant.
 * Usage: npm run bench:sessions [-- --sessions 100000 --grants 3000 --alg HS256 --connections 8,32,64,128 --profile DIR]
 * (--alg: IAM_JWT_ALG, RS256 by default, or ES256 or HS256; --profile: a CPU profile of the server's event loop during
 * the 32-connection row, 200 µs sampling, written to DIR.)
 */
import { availableParallelism, loadavg } from 'node:os';
import { systemClock } from '../../src/platform/clock.ts';
import { toNewEvents } from '../../src/platform/commands/handle-command.ts';
import { newId } from '../../src/platform/ids.ts';
import { cpuProfiler } from './cpu-profile.ts';
import { BENCH_ADMIN, benchService, timed } from './service.ts';
import { cheapestRounds, cpuPer, describeSplit, requestLikeContext, socketLoads, totalOf, whereTheTimeGoes } from './cpu-split.ts';
import { countStatements } from './statement-counter.ts';
import { fmt, numberListOption, numberOption, postgresCpu, textOption, walBytes } from './support.ts';

const SESSIONS = numberOption('sessions', 100_000);
const USERS = 1000;
const GRANTS = numberOption('grants', 3000);
const ALG = textOption('alg') ?? 'RS256';
const PROFILE = textOption('profile');
/** The rows' concurrent connections, `--connections 8,32,64,128` (a row of 32 is always measured: the statements and the profile are its). */
const CONNECTIONS = numberListOption('connections', [8, 32, 64]);
const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');
const AGENTS = [
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:121.0) Gecko/20100101 Firefox/121.0',
];

type Bench = Awaited<ReturnType<typeof benchService>>;

async function main(): Promise<void> {
  // Cheap password hashes: every refresh chain starts with a login, outside the measured windows.
  const bench = await benchService({ IAM_JWT_ALG: ALG, ARGON2_MEMORY_KIB: '1024', ARGON2_ITERATIONS: '1' });
  try {
    await run(bench);
  } finally {
    await bench.close();
  }
}

async function run({ inject, store, service, db }: Bench): Promise<void> {
  const admin = (await inject('POST', '/api/auth/login', BENCH_ADMIN)).data.accessToken;
  // Every chain is a session of the same user: the session limit would end the older ones.
  await inject('PUT', '/api/realm-settings', { section: 'login', data: { maxConcurrentSessions: 0 } }, admin);
  const postgres = await postgresCpu(db.pool);
  // A grant's CPU includes its event's background work: the read models catching up on it.
  const settled = async () => service.runner.waitFor(await store.headPosition(), 60_000);
  const { base, measured } = await socketLoads(service.app, postgres, settled);
  console.log(
    `sessions benchmark (node ${process.version}, ${service.keyRing.alg}, ${availableParallelism()} cores), HTTP/1.1 on ${base}, ` +
      `load generator in its own process, nothing pinned; load average before: ${load()}`,
  );

  /** `count` fresh sessions (logins, in-process), as the first refresh token of each chain. */
  const newChains = (count: number) => Promise.all(Array.from({ length: count }, async () => (await inject('POST', '/api/auth/login', BENCH_ADMIN)).data.refreshToken as string));
  /** Refresh grants over `concurrency` connections, each rotating its own session's token (a token used twice revokes its session). */
  const grantLoad = async (concurrency: number, requests = GRANTS) =>
    measured({
      path: '/api/auth/token',
      headers: { 'x-tenant': 'platform', 'content-type': 'application/json' },
      bodies: (await newChains(concurrency)).map((token) => JSON.stringify({ grant_type: 'refresh_token', refresh_token: token })),
      chain: { from: 'refresh_token', to: 'refresh_token' },
      concurrency,
      requests,
    });
  const liveLoad = (requests: number) => measured({ path: '/health/live', method: 'GET', headers: {}, bodies: [], concurrency: 32, requests });

  // Warm-up until the JIT has settled (as bench:oauth's).
  await grantLoad(32, 2000);
  await liveLoad(2000);
  const statements = countStatements();
  for (const concurrency of new Set([...CONNECTIONS, 32].sort((a, b) => a - b))) {
    statements.reset();
    const wal = await walBytes(db.pool);
    const profile = PROFILE && concurrency === 32 ? await cpuProfiler() : null;
    const loopBusy = performance.eventLoopUtilization();
    const { result, server } = await grantLoad(concurrency);
    const loopShare = performance.eventLoopUtilization(loopBusy).utilization;
    if (profile) console.log(`  CPU profile of the 32-connection row: ${await profile.stop(PROFILE!, `refresh-${ALG}-32`)}`);
    const serverMs = server.eventLoop + server.otherThreads;
    const all = totalOf(server);
    console.log(`refresh_token grants (${service.keyRing.alg}), ${String(concurrency).padStart(2)} connections: ${fmt(result.perSecond)}/s, p50 ${fmt(result.p50, 2)} ms, p99 ${fmt(result.p99, 2)} ms (load ${load()})`);
    console.log(
      `  server ${serverMs.toFixed(3)} ms of CPU a grant (${describeSplit(server)}); ${fmt(statements.total() / GRANTS, 2)} SQL statements, ${fmt((await wal()) / GRANTS)} WAL bytes a grant; ` +
        `load generator ${fmt(result.generatorUs)} µs a request; 2 cores bound: ${fmt(2000 / all)}/s (server and PostgreSQL), ${fmt(2000 / (all + result.generatorUs / 1000))}/s with the generator; ` +
        `cores busy ${((result.perSecond * (all + result.generatorUs / 1000)) / 1000).toFixed(2)} of 2; event loop busy ${loopShare.toFixed(2)} of its time (preempted time included)`,
    );
    if (concurrency === 32) {
      console.log('  SQL statements per grant at 32 connections (the request appends once; the rest is the log reader, projections, relay and outbound engine):');
      console.log(statements.top(GRANTS, 8).join('\n'));
    }
  }
  console.log('  (2 cores give at most 2,000 ms of CPU a second: 1,500 grants/s needs at most 1.33 ms a grant, server and PostgreSQL together)');

  // Where the time goes: the whole request against its parts, each at 32 concurrent and measured the
  // same way (CPU of every thread of the server and of PostgreSQL per grant, background work
  // included), each its cheapest of 3 rounds.
  // The command context the token route gives the grant (request metadata included: it is written with each event).
  const grantContext = requestLikeContext('platform');
  const claims = JSON.parse(Buffer.from(admin.split('.')[1], 'base64url').toString()) as { sub: string; sid: string; roles: string[] };
  const chains = await newChains(32);
  const perPart = Math.ceil(GRANTS / 3);
  const parts = await cheapestRounds({
    whole: async () => (await grantLoad(32, perPart)).server,
    grant: () =>
      cpuPer(
        postgres,
        perPart,
        32,
        async () => {
          const token = chains.pop()!;
          const { response } = await service.grants.refresh_token!.handle({ grant_type: 'refresh_token', refresh_token: token }, 'platform', grantContext);
          chains.push(response.refresh_token!);
        },
        settled,
      ),
    signature: () => cpuPer(postgres, perPart, 32, () => service.tokens.issue({ sub: claims.sub, tid: 'platform', sid: claims.sid, roles: claims.roles, acr: 'aal1', amr: ['pwd'] }, 900)),
    floor: async () => (await liveLoad(perPart)).server,
  });
  const [whole, grant, signature, floor] = [parts.whole, parts.grant, parts.signature, parts.floor].map(totalOf) as [number, number, number, number];
  console.log(
    whereTheTimeGoes(`refresh grant (${service.keyRing.alg}; server CPU, 32 connections; each part its cheapest of 3 rounds)`, parts.whole, [
      [`${service.keyRing.alg} signature of the access token (TokenService.issue)`, signature],
      ['the grant beyond it: session, decision, append, caches, the event\'s background work', grant - signature],
      ['  of which PostgreSQL (the append, the read models\' and the relay\'s statements)', parts.grant.postgres],
      ['HTTP floor: sockets, HTTP parsing, fastify, global hooks (GET /health/live)', floor],
      ['the token route\'s HTTP work: JSON body, schemas, tenant, answer (the rest)', whole - grant - floor],
    ]).join('\n'),
  );
  console.log(`load average: ${load()}`);

  const seedStarted = performance.now();
  const context = { tenantId: 'platform', actor: 'bench' };
  const userIds = Array.from({ length: USERS }, () => newId());
  const userEvents = userIds.map((userId, i) => ({
    streamId: `user-platform.${userId}`,
    expectedRevision: 'no_stream' as const,
    events: toNewEvents([{ type: 'UserCreated', data: { userId, email: `s${i}@bench.test`, username: null, firstName: 'Session', lastName: `User${i}`, enabled: true, emailVerified: false, passwordHash: null, roles: [] } }], context, systemClock),
  }));
  await store.appendMulti(userEvents);
  let last = 0n;
  const now = Date.now();
  for (let base = 0; base < SESSIONS; base += 1000) {
    const appends = [];
    for (let i = base; i < Math.min(SESSIONS, base + 1000); i += 1) {
      const sessionId = newId();
      // Spread over the last 12 hours, with lifetimes ahead, so most are active.
      const startedAt = new Date(now - (i % 43_200) * 1000);
      const data = {
        sessionId,
        userId: userIds[i % USERS],
        startedAt: startedAt.toISOString(),
        refreshTokenHash: sessionId,
        refreshExpiresAt: new Date(startedAt.getTime() + 604_800_000).toISOString(),
        ipAddress: `10.${i % 256}.${(i >> 8) % 256}.1`,
        userAgent: AGENTS[i % AGENTS.length],
        expiresAt: new Date(startedAt.getTime() + 86_400_000).toISOString(),
        idleTimeoutSeconds: 86_400,
        refreshTokenLifetimeSeconds: 604_800,
        acr: 'aal1',
        amr: ['pwd'],
      };
      appends.push({ streamId: `session-platform.${sessionId}`, expectedRevision: 'no_stream' as const, events: toNewEvents([{ type: 'SessionStarted', data }], context, systemClock) });
    }
    last = (await store.appendMulti(appends)).at(-1)!.position;
  }
  await service.runner.waitFor(last, 600_000, ['sessions', 'users']);
  console.log(`seeded ${fmt(SESSIONS)} sessions of ${fmt(USERS)} users through events and the projection in ${fmt((performance.now() - seedStarted) / 1000, 1)} s`);

  const queries = ['?limit=50', '?page=200&limit=50', '?status=active&limit=50', '?status=revoked&limit=50', `?userId=${userIds[7]}&limit=50`];
  for (const query of queries) {
    const list = await timed(100, 1, () => inject('GET', `/api/admin/sessions${query}`, undefined, admin));
    console.log(`GET /api/admin/sessions${query.padEnd(48)} p50 ${fmt(list.p50, 1)} ms, p99 ${fmt(list.p99, 1)} ms`);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
