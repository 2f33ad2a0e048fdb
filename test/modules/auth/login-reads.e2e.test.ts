import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInstanceBeside } from '../../support/second-instance.ts';
import { PLATFORM, startTestService, type TestService } from '../../support/service.ts';

/**
 * A password login reads the account (the e-mail's reservation, the user, the login stream's tail)
 * in one round trip once its instance has seen the e-mail's holder, and never logs in the user the
 * instance remembered when the e-mail has moved to someone else meanwhile (through another instance).
 */
describe('password login reads', () => {
  let a: TestService;
  let b: TestService;
  /** B's statements: text and parameters (JSON). */
  const statements: { text: string; parameters: string }[] = [];
  const ADMIN = { email: 'root@login-reads.test', password: 'R00t-Passw0rd' };
  const FIRST = { email: 'moving@login-reads.test', password: 'First-Passw0rd' };
  const SECOND = { email: 'second@login-reads.test', password: 'Second-Passw0rd' };

  beforeAll(async () => {
    a = await startTestService({ env: { IAM_BOOTSTRAP_ADMIN_EMAIL: ADMIN.email, IAM_BOOTSTRAP_ADMIN_PASSWORD: ADMIN.password } });
    b = await startInstanceBeside(a, (text, parameters) => statements.push({ text, parameters: JSON.stringify(parameters) }));
  });
  afterAll(async () => {
    await b?.close();
    await b?.db.pool.end();
    await a?.close();
  });

  const login = (on: TestService, body: { email: string; password: string }) => on.request({ method: 'POST', url: '/api/auth/login', tenant: PLATFORM, body });
  const subjectOf = (accessToken: string) => JSON.parse(Buffer.from(accessToken.split('.')[1]!, 'base64url').toString()).sub as string;
  let firstId = '';

  it('reads the account in one statement once the instance has seen the e-mail, and the user stream nowhere else', async () => {
    const admin = await a.token({ sub: 'root', tenant: PLATFORM, roles: ['admin'] });
    const created = await a.request({ method: 'POST', url: '/api/users', tenant: PLATFORM, token: admin, body: FIRST });
    expect(created.status).toBe(201);
    firstId = created.body.data.id;
    expect((await login(b, FIRST)).status).toBe(200);

    const from = statements.length;
    const again = await login(b, FIRST);
    expect(again.status).toBe(200);
    expect(subjectOf(again.body.data.accessToken)).toBe(firstId);
    expect(await b.service.reactions.waitFor(await a.store.lastWrittenPosition(), 10_000)).not.toBeNull();
    const reads = statements.slice(from).filter((s) => !s.text.includes('events_append'));
    const naming = (stream: string) => reads.filter((s) => s.parameters.includes(stream));
    // The e-mail's reservation and the login stream are read once, in the same statement as the user.
    const [read, ...others] = naming(`"login-${PLATFORM}.${firstId}"`);
    expect(others).toEqual([]);
    expect(read!.parameters).toContain(`"user-${PLATFORM}.${firstId}"`);
    expect(naming(`"reservation-${PLATFORM}.email.`)).toEqual([read]);
    // The session's reaction found the user in the instance's cache, which the first login's reaction filled and this login kept.
    expect(naming(`"user-${PLATFORM}.${firstId}"`)).toEqual([read]);
  });

  it('an e-mail that moved to another user through the other instance logs in that user, not the one remembered', async () => {
    const admin = await a.token({ sub: 'root', tenant: PLATFORM, roles: ['admin'] });
    expect((await login(b, FIRST)).status).toBe(200);

    expect((await a.request({ method: 'PUT', url: `/api/users/${firstId}`, tenant: PLATFORM, token: admin, body: { email: 'moved@login-reads.test' } })).status).toBe(200);
    const second = await a.request({ method: 'POST', url: '/api/users', tenant: PLATFORM, token: admin, body: { ...SECOND, email: FIRST.email } });
    expect(second.status).toBe(201);

    expect((await login(b, FIRST)).status).toBe(401);
    const taken = await login(b, { email: FIRST.email, password: SECOND.password });
    expect(taken.status).toBe(200);
    expect(subjectOf(taken.body.data.accessToken)).toBe(second.body.data.id);
    const moved = await login(b, { email: 'moved@login-reads.test', password: FIRST.password });
    expect(moved.status).toBe(200);
    expect(subjectOf(moved.body.data.accessToken)).toBe(firstId);
  });
});
