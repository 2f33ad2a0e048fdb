/**
 * Identity benchmark: password logins per second (next to raw argon2id hashes per second, so the
 * ratio shows the overhead beyond hashing), user creations per second over HTTP, and
 * GET /api/users?search= latency with 100,000 users in one tenant.
 * Usage: npm run bench:identity [-- --users 100000]
 */
import { hash } from '@node-rs/argon2';
import { OWASP_ARGON2ID } from '../../src/modules/users/passwords.ts';
import { systemClock } from '../../src/platform/clock.ts';
import { toNewEvents } from '../../src/platform/commands/handle-command.ts';
import { ReservationNames } from '../../src/platform/commands/reservation-names.ts';
import { newId } from '../../src/platform/ids.ts';
import { BENCH_ADMIN, BENCH_MASTER_KEY, benchService, timed } from './service.ts';
import { fmt, numberOption } from './support.ts';

const USERS = numberOption('users', 100_000);
const PASSWORD = BENCH_ADMIN.password;

async function main(): Promise<void> {
  const { inject, store, service, close } = await benchService();
  console.log(`identity benchmark (node ${process.version}, argon2id m=${OWASP_ARGON2ID.memoryCost} t=${OWASP_ARGON2ID.timeCost} p=${OWASP_ARGON2ID.parallelism}), in-process HTTP (fastify inject)`);

  const hashes = await timed(200, 4, () => hash(PASSWORD, OWASP_ARGON2ID));
  console.log(`raw argon2id hashes:  ${fmt(hashes.perSecond, 1)}/s (4 concurrent)`);
  const logins = await timed(200, 4, () => inject('POST', '/api/auth/login', BENCH_ADMIN));
  console.log(`password logins:      ${fmt(logins.perSecond, 1)}/s, p50 ${fmt(logins.p50, 1)} ms, p99 ${fmt(logins.p99, 1)} ms -> ${fmt((logins.perSecond / hashes.perSecond) * 100)}% of raw hashing`);

  const admin = (await inject('POST', '/api/auth/login', BENCH_ADMIN)).data.accessToken;
  const creates = await timed(1000, 8, (i) => inject('POST', '/api/users', { email: `created${i}@bench.test`, firstName: 'Created' }, admin));
  console.log(`user creations (no password, read-your-writes): ${fmt(creates.perSecond)}/s, p50 ${fmt(creates.p50, 1)} ms, p99 ${fmt(creates.p99, 1)} ms`);
  const withPassword = await timed(200, 4, (i) => inject('POST', '/api/users', { email: `pw${i}@bench.test`, password: PASSWORD }, admin));
  console.log(`user creations (with password): ${fmt(withPassword.perSecond)}/s, p50 ${fmt(withPassword.p50, 1)} ms`);

  // Seed the rest through the event store (the same events the API appends), in batches.
  const userRole = (await inject('GET', '/api/roles', undefined, admin)).data.find((r: { name: string }) => r.name === 'user');
  const seedStarted = performance.now();
  let last = 0n;
  const reservationNames = new ReservationNames(BENCH_MASTER_KEY);
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
        { streamId: reservationNames.streamsOf('platform', 'email', email).keyed, expectedRevision: 'no_stream' as const, events: toNewEvents([{ type: 'ReservationClaimed', data: { kind: 'email', value: email, owner } }], context, systemClock) },
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
  await close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
