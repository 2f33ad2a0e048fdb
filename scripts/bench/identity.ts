/**
 * Identity benchmark: password logins per second (next to raw argon2id hashes per second, so the
 * ratio shows the overhead beyond hashing), user creations per second over HTTP, and
 * GET /api/users?search= latency with 100,000 users in one tenant.
 * Usage: npm run bench:identity [-- --users 100000]
 */
import { hash } from '@node-rs/argon2';
import pino from 'pino';
import { buildService } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { OWASP_ARGON2ID } from '../../src/modules/users/passwords.ts';
import { systemClock } from '../../src/platform/clock.ts';
import { toNewEvents } from '../../src/platform/commands/handle-command.ts';
import { reservationStreamId } from '../../src/platform/commands/reservations.ts';
import { PostgresEventStore } from '../../src/platform/eventstore/postgres.ts';
import { newId } from '../../src/platform/ids.ts';
import { benchDatabase, fmt, percentile } from './support.ts';

const flag = process.argv.indexOf('--users');
const USERS = flag > 0 ? Number(process.argv[flag + 1]) : 100_000;
const PASSWORD = 'Bench-Passw0rd';

async function timed<T>(count: number, concurrency: number, task: (i: number) => Promise<T>) {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const i = next++;
        const t0 = performance.now();
        await task(i);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { perSecond: count / seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}

async function main(): Promise<void> {
  const db = await benchDatabase();
  const config = loadConfig({ DATABASE_URL: db.url, IAM_BOOTSTRAP_TENANT: 'platform', IAM_BOOTSTRAP_ADMIN_EMAIL: 'root@bench.test', IAM_BOOTSTRAP_ADMIN_PASSWORD: PASSWORD, LOG_LEVEL: 'warn', SUBSCRIPTION_POLL_MS: '200' });
  const store = new PostgresEventStore(db.pool, { pollIntervalMs: 200 });
  const service = await buildService({ config, logger: pino({ level: 'warn' }), pool: db.pool, store, clock: systemClock, masterKey: 'bench' });
  await service.start();
  const inject = async (method: string, url: string, body?: unknown, token?: string) => {
    const response = await service.app.inject({
      method: method as 'GET',
      url,
      headers: { 'x-tenant': 'platform', 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      ...(body ? { payload: JSON.stringify(body) } : {}),
    });
    if (response.statusCode >= 400) throw new Error(`${method} ${url}: ${response.statusCode} ${response.body}`);
    return JSON.parse(response.body);
  };
  console.log(`identity benchmark (node ${process.version}, argon2id m=${OWASP_ARGON2ID.memoryCost} t=${OWASP_ARGON2ID.timeCost} p=${OWASP_ARGON2ID.parallelism}), in-process HTTP (fastify inject)`);

  const hashes = await timed(200, 4, () => hash(PASSWORD, OWASP_ARGON2ID));
  console.log(`raw argon2id hashes:  ${fmt(hashes.perSecond, 1)}/s (4 concurrent)`);
  const logins = await timed(200, 4, () => inject('POST', '/api/auth/login', { email: 'root@bench.test', password: PASSWORD }));
  console.log(`password logins:      ${fmt(logins.perSecond, 1)}/s, p50 ${fmt(logins.p50, 1)} ms, p99 ${fmt(logins.p99, 1)} ms -> ${fmt((logins.perSecond / hashes.perSecond) * 100)}% of raw hashing`);

  const admin = (await inject('POST', '/api/auth/login', { email: 'root@bench.test', password: PASSWORD })).data.accessToken;
  const creates = await timed(1000, 8, (i) => inject('POST', '/api/users', { email: `created${i}@bench.test`, firstName: 'Created' }, admin));
  console.log(`user creations (no password, read-your-writes): ${fmt(creates.perSecond)}/s, p50 ${fmt(creates.p50, 1)} ms, p99 ${fmt(creates.p99, 1)} ms`);
  const withPassword = await timed(200, 4, (i) => inject('POST', '/api/users', { email: `pw${i}@bench.test`, password: PASSWORD }, admin));
  console.log(`user creations (with password): ${fmt(withPassword.perSecond)}/s, p50 ${fmt(withPassword.p50, 1)} ms`);

  // Seed the rest through the event store (the same events the API appends), in batches.
  const userRole = (await inject('GET', '/api/roles', undefined, admin)).data.find((r: { name: string }) => r.name === 'user');
  const seedStarted = performance.now();
  let last = 0n;
  const firstNames = ['Ada', 'Grace', 'Alan', 'Edsger', 'Barbara', 'Donald', 'Ken', 'Dennis', 'Margaret', 'Linus'];
  for (let base = 0; base < USERS; base += 500) {
    const appends = [];
    for (let i = base; i < Math.min(USERS, base + 500); i += 1) {
      const userId = newId();
      const email = `user${i}@bench.test`;
      const context = { tenantId: 'platform', actor: 'bench' };
      const owner = `user-platform.${userId}`;
      appends.push(
        { streamId: owner, expectedRevision: 'no_stream' as const, events: toNewEvents([{ type: 'UserCreated', data: { userId, email, username: `user${i}`, firstName: firstNames[i % 10], lastName: `Surname${i}`, enabled: true, emailVerified: false, passwordHash: null, roles: [{ id: userRole.id, name: 'user' }] } }], context, systemClock) },
        { streamId: reservationStreamId('platform', 'email', email), expectedRevision: 'no_stream' as const, events: toNewEvents([{ type: 'ReservationClaimed', data: { kind: 'email', value: email, owner } }], context, systemClock) },
      );
    }
    const results = await store.appendMulti(appends);
    last = results.at(-1)!.position;
  }
  await service.runner.waitFor(last, 600_000, ['users']);
  console.log(`seeded ${fmt(USERS)} users through events and the projection in ${fmt((performance.now() - seedStarted) / 1000, 1)} s`);

  for (const term of ['user4242', 'grace', 'surname99', 'bench.test']) {
    const search = await timed(100, 1, () => inject('GET', `/api/users?search=${encodeURIComponent(term)}&limit=20`, undefined, admin));
    console.log(`GET /api/users?search=${term.padEnd(10)} p50 ${fmt(search.p50, 1)} ms, p99 ${fmt(search.p99, 1)} ms`);
  }
  const page = await timed(100, 1, () => inject('GET', '/api/users?page=50&limit=100', undefined, admin));
  console.log(`GET /api/users?page=50&limit=100 p50 ${fmt(page.p50, 1)} ms, p99 ${fmt(page.p99, 1)} ms`);
  await service.stop();
  await store.close();
  await db.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
