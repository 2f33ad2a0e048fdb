/**
 * Sessions benchmark: refresh-token grants per second (rotation with reuse detection, over HTTP),
 * where a grant's CPU goes (the whole request against its signature, the grant alone and a bare
 * request), and GET /api/admin/sessions latency with 100,000 sessions in one tenant.
 * Usage: npm run bench:sessions [-- --sessions 100000 --grants 1000]
 */
import { loadavg } from 'node:os';
import { systemClock } from '../../src/platform/clock.ts';
import { toNewEvents } from '../../src/platform/commands/handle-command.ts';
import { newId } from '../../src/platform/ids.ts';
import { BENCH_ADMIN, benchService, timed } from './service.ts';
import { cpuSplit, describeSplit, requestLikeContext, tokenRequestParts, whereTheTimeGoes } from './cpu-split.ts';
import { countStatements } from './statement-counter.ts';
import { fmt, numberOption, postgresCpu } from './support.ts';

const flag = process.argv.indexOf('--sessions');
const SESSIONS = flag > 0 ? Number(process.argv[flag + 1]) : 100_000;
const USERS = 1000;
const GRANTS = numberOption('grants', 1000);
const AGENTS = [
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:121.0) Gecko/20100101 Firefox/121.0',
];

/** The WAL PostgreSQL writes from now on (bytes, background work included): a figure a loaded machine does not skew. */
async function walBytes(pool: Awaited<ReturnType<typeof benchService>>['db']['pool']): Promise<() => Promise<number>> {
  const { rows } = await pool.query<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn');
  return async () => Number((await pool.query<{ bytes: string }>('select pg_wal_lsn_diff(pg_current_wal_lsn(), $1) as bytes', [rows[0]!.lsn])).rows[0]!.bytes);
}

async function main(): Promise<void> {
  // maxConcurrentSessions 0: the refresh bench keeps many sessions of one user alive.
  const bench = await benchService();
  try {
    await run(bench);
  } finally {
    await bench.close();
  }
}

async function run({ inject, store, service, db }: Awaited<ReturnType<typeof benchService>>): Promise<void> {
  const admin = (await inject('POST', '/api/auth/login', BENCH_ADMIN)).data.accessToken;
  await inject('PUT', '/api/realm-settings', { section: 'login', data: { maxConcurrentSessions: 0 } }, admin);
  console.log(`sessions benchmark (node ${process.version}), in-process HTTP (fastify inject)`);

  const chains = await Promise.all(Array.from({ length: 32 }, async () => (await inject('POST', '/api/auth/login', BENCH_ADMIN)).data.refreshToken as string));
  // Each grant takes a chain no other grant is using (a token used twice revokes its session).
  const refresh = async () => {
    const token = chains.pop()!;
    const answer = await inject('POST', '/api/auth/token', { grant_type: 'refresh_token', refresh_token: token });
    chains.push(answer.refresh_token);
  };
  // Statements and CPU per grant (event loop, signing threads, PostgreSQL): figures a loaded machine skews less than rates.
  const statements = countStatements();
  const postgres = await postgresCpu(db.pool);
  for (const concurrency of [1, 8, 32]) {
    statements.reset();
    const wal = await walBytes(db.pool);
    const cpu = cpuSplit(postgres);
    const grants = await timed(GRANTS, concurrency, refresh);
    const split = cpu.per(GRANTS);
    console.log(
      `refresh_token grants, ${String(concurrency).padStart(2)} concurrent: ${fmt(grants.perSecond)}/s, p50 ${fmt(grants.p50, 1)} ms, p99 ${fmt(grants.p99, 1)} ms, ` +
        `${fmt(statements.total() / GRANTS, 2)} SQL statements, ${fmt((await wal()) / GRANTS)} WAL bytes and ${fmt(split.eventLoop + split.otherThreads, 2)} ms of service CPU per grant (load average ${loadavg()[0]!.toFixed(1)})`,
    );
    console.log(`  ${describeSplit(split)} (the event loop includes the in-process client's side)`);
  }
  console.log('  SQL statements per grant at 32 concurrent (the request appends once; the rest is the log reader, projections, relay and outbound engine):');
  console.log(statements.top(GRANTS, 8).join('\n'));

  // Where the time goes: the whole grant against its parts, each at 32 concurrent and measured the
  // same way (CPU of every thread and of PostgreSQL per grant, background work included).
  // The command context the token route gives the grant (request metadata included: it is written with each event).
  const grantContext = requestLikeContext('platform');
  const claims = JSON.parse(Buffer.from(admin.split('.')[1], 'base64url').toString()) as { sub: string; sid: string; roles: string[] };
  const parts = await tokenRequestParts(postgres, GRANTS, service.app, {
    whole: refresh,
    grant: async () => {
      const token = chains.pop()!;
      const { response } = await service.grants.refresh_token!.handle({ grant_type: 'refresh_token', refresh_token: token }, 'platform', grantContext);
      chains.push(response.refresh_token!);
    },
    signature: () => service.tokens.issue({ sub: claims.sub, tid: 'platform', sid: claims.sid, roles: claims.roles, acr: 'aal1', amr: ['pwd'] }, 900),
  });
  console.log(
    whereTheTimeGoes('refresh grant (32 concurrent; each part its cheapest of 3 rounds)', parts.whole, [
      ['RS256 signature of the access token (TokenService.issue)', parts.signature],
      ['the grant beyond it: session, decision, append, caches, the event\'s background work', parts.grantBeyondSignature],
      ['  of which PostgreSQL (the append, the read models\' and the relay\'s statements)', parts.grant.postgres],
      ['HTTP floor: in-process client, fastify, global hooks (GET /health/live)', parts.floor],
      ['the token route\'s HTTP work: JSON body, schemas, tenant (the rest)', parts.routeWork],
    ]).join('\n'),
  );

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
