import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { userStreamId } from '../../../src/modules/users/index.ts';
import { ManualClock } from '../../../src/platform/clock.ts';
import { PLATFORM, startTestService, type TestService } from '../../support/service.ts';

const BOB = { email: 'bob@p.test', password: 'Bob-Passw0rd' };
// Cheap argon2 so bursts of logins stay quick; the cost itself is tested elsewhere.
const FAST_HASHING = { ARGON2_MEMORY_KIB: '1024', ARGON2_ITERATIONS: '1' };

describe('lockout, password change, signup, userinfo and the session expiry sweep', () => {
  let t: TestService;
  const clock = new ManualClock(new Date());
  const admin = () => t.token({ sub: 'admin', tenant: PLATFORM, roles: ['admin'] });
  const call = async (method: string, url: string, body?: unknown, token?: string) => t.request({ method, url, tenant: PLATFORM, body, ...(token ? { token } : {}) });
  const login = (password = BOB.password, ip = '10.0.0.1') =>
    t.request({ method: 'POST', url: '/api/auth/login', tenant: PLATFORM, body: { email: BOB.email, password }, remoteAddress: ip });
  const events = async (type: string) =>
    (await t.db.pool.query<{ data: any }>('select data from events where type = $1 order by position', [type])).rows.map((r) => r.data);
  let bobId: string;

  beforeAll(async () => {
    t = await startTestService({ clock, env: FAST_HASHING });
    await call('PUT', '/api/realm-settings', { section: 'bruteForce', data: { lockoutThreshold: 3, lockoutDuration: 300 } }, await admin());
    bobId = (await call('POST', '/api/users', { ...BOB, firstName: 'Bob' }, await admin())).body.data.id;
  });
  afterAll(() => t.close());

  it('a burst of failed logins from many IPs locks the account exactly at the threshold', async () => {
    const answers = await Promise.all(Array.from({ length: 1000 }, (_, i) => login('wrong-Passw0rd', `10.1.${i >> 8}.${i & 255}`)));
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 401)).toHaveLength(2);
    expect(statuses.filter((s) => s === 423)).toHaveLength(998);
    expect(answers.find((a) => a.status === 423)!.body.error.code).toBe('ACCOUNT_LOCKED');
    const locks = await events('AccountLocked');
    expect(locks).toHaveLength(1);
    expect(locks[0]).toMatchObject({ userId: bobId, lockoutNumber: 1, failures: 3 });
    const reasons = (await events('LoginFailed')).filter((d) => d.userId === bobId).map((d) => d.reason);
    expect(reasons.filter((r) => r === 'bad_password')).toHaveLength(3);
    expect(reasons.filter((r) => r === "locked")).toHaveLength(997);
    expect(await events('SessionStarted')).toHaveLength(0);
  });

  it('refuses the right password while locked, with Retry-After; the users list shows the lock', async () => {
    const locked = await login();
    expect(locked.status).toBe(423);
    expect(Number(locked.headers['retry-after'])).toBeGreaterThan(290);
    expect(Number(locked.headers['retry-after'])).toBeLessThanOrEqual(300);
    expect(locked.body.data).toBeUndefined();
    const list = await call('GET', '/api/users?status=locked', undefined, await admin());
    expect(list.body.data.data.map((u: { id: string }) => u.id)).toEqual([bobId]);
    expect((await call('GET', `/api/users/${bobId}`, undefined, await admin())).body.data.lockedUntil).toEqual(expect.any(String));
  });

  it('the lock ends after lockoutDuration; the next lock escalates to 30 minutes; an admin can unlock', async () => {
    clock.advance(301_000);
    expect((await login()).status).toBe(200);
    expect((await call('GET', '/api/users?status=locked', undefined, await admin())).body.data.data).toEqual([]);
    for (const expected of [401, 401, 423]) expect((await login('wrong-Passw0rd')).status).toBe(expected);
    const second = await login();
    expect(Number(second.headers['retry-after'])).toBeGreaterThan(1790);
    expect((await events('AccountLocked')).at(-1)).toMatchObject({ lockoutNumber: 2 });

    const unlock = await call('POST', `/api/users/${bobId}/unlock`, undefined, await admin());
    expect(unlock.status).toBe(200);
    expect(unlock.body).toEqual({ ok: true, data: { unlocked: true } });
    expect((await login()).status).toBe(200);
    expect((await call('POST', `/api/users/${bobId}/unlock`, undefined, await admin())).status).toBe(200);
    expect((await call('POST', '/api/users/00000000-0000-7000-8000-000000000000/unlock', undefined, await admin())).status).toBe(404);
    const userToken = await t.token({ sub: bobId, tenant: PLATFORM, roles: ['user'] });
    expect((await call('POST', `/api/users/${bobId}/unlock`, undefined, userToken)).status).toBe(403);
  });

  it('changes the password with the current one: policy, history, and the other sessions end', async () => {
    const first = (await login()).body.data;
    const second = (await login()).body.data;
    const change = (currentPassword: string, newPassword: string) =>
      call('POST', '/api/auth/change-password', { currentPassword, newPassword }, first.accessToken);

    const wrongCurrent = await change('not-my-Passw0rd', 'New-Passw0rd1');
    expect([wrongCurrent.status, wrongCurrent.body.error.code]).toEqual([401, 'INVALID_CREDENTIALS']);
    const weak = await change(BOB.password, 'short');
    expect([weak.status, weak.body.error.details[0].path]).toEqual([400, 'body.newPassword']);
    expect((await change(BOB.password, BOB.password)).body.error.message).toBe('Password must differ from the last 5 passwords');

    const changed = await change(BOB.password, 'New-Passw0rd1');
    expect(changed.body).toEqual({ ok: true, data: { changed: true } });
    const refresh = (token: string) => call('POST', '/api/auth/token', { grant_type: 'refresh_token', refresh_token: token });
    expect((await refresh(second.refreshToken)).body.error).toBe('invalid_grant');
    expect((await refresh(first.refreshToken)).status).toBe(200);
    expect((await login()).status).toBe(401);
    expect((await login('New-Passw0rd1')).status).toBe(200);

    // Back to the first password: still in the history.
    expect((await change('New-Passw0rd1', BOB.password)).status).toBe(400);
    const recorded = await events('UserPasswordChanged');
    expect(recorded.map((d) => d.reason)).toEqual(['change']);
    expect(JSON.stringify(recorded)).not.toContain('New-Passw0rd1');
    expect((await call('POST', '/api/auth/change-password', { currentPassword: 'x', newPassword: 'y' })).status).toBe(401);
  });

  it('signs up a user-role account and signs it in; userinfo answers its claims', async () => {
    const body = { email: 'new@p.test', password: 'Sign-Up-Passw0rd', firstName: 'Nia', username: 'nia' };
    const signup = await call('POST', '/api/auth/signup', body);
    expect(signup.status).toBe(201);
    expect(signup.body.data).toMatchObject({ tokenType: 'Bearer', expiresIn: 900, sessionId: expect.any(String), refreshToken: expect.any(String) });
    expect(signup.body.data.user).toMatchObject({ email: 'new@p.test', firstName: 'Nia', roles: ['user'], enabled: true });
    // Read through the service's store: the log holds the e-mail sealed (docs/erasure.md).
    const [created] = await t.events.readStream(userStreamId(PLATFORM, signup.body.data.user.id));
    expect(created!.data).toMatchObject({ email: 'new@p.test', origin: 'signup' });

    const userinfo = await call('GET', '/api/auth/validate', undefined, signup.body.data.accessToken);
    expect(userinfo.body).toEqual({
      sub: signup.body.data.user.id,
      email: 'new@p.test',
      email_verified: false,
      given_name: 'Nia',
      family_name: null,
      preferred_username: 'nia',
      tenant: PLATFORM,
      roles: ['user'],
    });

    expect((await call('POST', '/api/auth/signup', { ...body, username: 'other' })).body.error.code).toBe('EMAIL_TAKEN');
    expect((await call('POST', '/api/auth/signup', { ...body, email: 'weak@p.test', password: 'weak' })).status).toBe(400);
    expect((await call('POST', '/api/auth/signup', { ...body, email: 'x@p.test', roles: ['admin'] })).status).toBe(400);
    await call('PUT', '/api/realm-settings', { section: 'general', data: { allowSignup: false } }, await admin());
    const closed = await call('POST', '/api/auth/signup', { ...body, email: 'late@p.test', username: 'late' });
    expect([closed.status, closed.body.error.code]).toEqual([403, 'SIGNUP_DISABLED']);
  });

  it('userinfo refuses the access token of a user disabled since it was issued, as the refresh grant does', async () => {
    const dee = { email: 'dee@p.test', password: 'Dee-Passw0rd' };
    const deeId = (await call('POST', '/api/users', dee, await admin())).body.data.id;
    const signedIn = (await call('POST', '/api/auth/login', dee)).body.data;
    expect((await call('GET', '/api/auth/validate', undefined, signedIn.accessToken)).status).toBe(200);

    expect((await call('PUT', `/api/users/${deeId}`, { enabled: false }, await admin())).status).toBe(200);
    const refreshed = await call('POST', '/api/auth/token', { grant_type: 'refresh_token', refresh_token: signedIn.refreshToken });
    expect(refreshed.body.error).toBe('invalid_grant');
    const userinfo = await call('GET', '/api/auth/validate', undefined, signedIn.accessToken);
    expect([userinfo.status, userinfo.body.error?.code]).toEqual([401, 'TOKEN_INVALID']);
  });

  it('wrong current passwords at change-password count towards the lockout, as wrong passwords at login do', async () => {
    const eve = { email: 'eve@p.test', password: 'Eve-Passw0rd' };
    expect((await call('POST', '/api/users', eve, await admin())).status).toBe(201);
    const stolen = (await call('POST', '/api/auth/login', eve)).body.data.accessToken;
    // lockoutThreshold is 3: a stolen access token must not buy more guesses at the password than the login form does.
    for (let guess = 1; guess <= 3; guess += 1) {
      await call('POST', '/api/auth/change-password', { currentPassword: `Guess-Passw0rd${guess}`, newPassword: 'Taken-Over-Passw0rd1' }, stolen);
    }
    const afterGuesses = await call('POST', '/api/auth/login', eve);
    expect([afterGuesses.status, afterGuesses.body.error?.code]).toEqual([423, 'ACCOUNT_LOCKED']);
  });

  it('change-password guesses sent together lock exactly at the threshold; while locked even the right current password is refused, before any change', async () => {
    const fay = { email: 'fay@p.test', password: 'Fay-Passw0rd' };
    const fayId = (await call('POST', '/api/users', fay, await admin())).body.data.id;
    const stolen = (await call('POST', '/api/auth/login', fay)).body.data.accessToken;
    const change = (currentPassword: string) => call('POST', '/api/auth/change-password', { currentPassword, newPassword: 'Taken-Over-Passw0rd2' }, stolen);

    const statuses = (await Promise.all(Array.from({ length: 20 }, (_, i) => change(`Guess-Passw0rd${i}`)))).map((a) => a.status);
    expect(statuses.filter((s) => s === 401)).toHaveLength(2);
    expect(statuses.filter((s) => s === 423)).toHaveLength(18);
    const reasons = (await events('LoginFailed')).filter((d) => d.userId === fayId).map((d) => d.reason);
    expect(reasons).toEqual(['bad_password', 'bad_password', 'bad_password']);
    expect((await events('AccountLocked')).filter((d) => d.userId === fayId)).toHaveLength(1);

    const right = await change(fay.password);
    expect([right.status, right.body.error?.code]).toEqual([423, 'ACCOUNT_LOCKED']);
    expect(Number(right.headers['retry-after'])).toBeGreaterThan(290);
    expect((await call('POST', `/api/users/${fayId}/unlock`, undefined, await admin())).status).toBe(200);
    expect((await call('POST', '/api/auth/login', fay)).status).toBe(200);
  });

  it('the sweep records ended sessions as SessionExpired, once', async () => {
    const session = (await login('New-Passw0rd1')).body.data;
    clock.advance(3601_000); // sessionIdleTimeout
    const swept = await t.service.sessionSweep.sweepOnce();
    expect(swept).toBeGreaterThanOrEqual(1);
    expect((await events('SessionExpired')).map((d) => d.sessionId)).toContain(session.sessionId);
    expect(await t.service.sessionSweep.sweepOnce()).toBe(0);
    const listed = await call('GET', `/api/admin/sessions?userId=${bobId}&status=active`, undefined, await admin());
    expect(listed.body.sessions).toEqual([]);
    const read = await call('GET', `/api/admin/sessions?userId=${bobId}`, undefined, await admin());
    expect(read.body.sessions.find((s: { id: string }) => s.id === session.sessionId).status).toBe('expired');
  });
});
