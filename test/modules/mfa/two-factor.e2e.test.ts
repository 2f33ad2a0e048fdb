import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { base32Decode, timeStep, totpCode } from '../../../src/modules/mfa/totp.ts';
import { ManualClock } from '../../../src/platform/clock.ts';
import { PLATFORM, startTestService, type TestService } from '../../support/service.ts';

const ANN = { email: 'ann@mfa.test', password: 'Ann-Passw0rd' };
const FAST_HASHING = { ARGON2_MEMORY_KIB: '1024', ARGON2_ITERATIONS: '1' };
const OTHER = 'mfa-other';

describe('two-factor sign-in with TOTP (decisions.md, Two-factor)', () => {
  let t: TestService;
  // Whole 30-second steps from a step's start: each advance gives a fresh code.
  const clock = new ManualClock(new Date(Math.ceil(Date.now() / 30_000) * 30_000 + 1_000));
  let secret: string;
  let annId: string;
  let recoveryCodes: string[];
  const admin = (tenant = PLATFORM) => t.token({ sub: 'admin', tenant, roles: ['admin'] });
  const call = (method: string, url: string, body?: unknown, token?: string, tenant = PLATFORM) => t.request({ method, url, tenant, body, ...(token ? { token } : {}) });
  const login = (password = ANN.password, tenant = PLATFORM) => call('POST', '/api/auth/login', { email: ANN.email, password }, undefined, tenant);
  const verify = (mfaToken: string, code: string, method = 'totp', tenant = PLATFORM) => call('POST', '/api/auth/mfa/verify', { mfaToken, method, code }, undefined, tenant);
  const code = (stepOffset = 0) => totpCode(base32Decode(secret), timeStep(clock.now()) + stepOffset);
  const nextStep = () => clock.advance(30_000);
  const events = async (type: string) =>
    (await t.db.pool.query<{ data: any }>("select data from events where type = $1 and stream_id like $2 order by position", [type, `%${annId}`])).rows.map((r) => r.data);
  const challenge = async () => {
    const answer = await login();
    expect(answer.status).toBe(200);
    return answer.body.data.mfaToken as string;
  };

  beforeAll(async () => {
    t = await startTestService({ clock, env: FAST_HASHING });
    await call('PUT', '/api/realm-settings', { section: 'bruteForce', data: { lockoutThreshold: 4, lockoutDuration: 300 } }, await admin());
    annId = (await call('POST', '/api/users', ANN, await admin())).body.data.id;
    await call('POST', '/api/tenants', { name: OTHER, displayName: 'Other' }, await admin());
  });
  afterAll(() => t.close());

  it('enrols: setup shows a secret once, enable needs a current code and shows ten recovery codes', async () => {
    const token = (await login()).body.data.accessToken as string;
    expect((await call('POST', '/api/user/2fa/totp/enable', { code: '123456' }, token)).body.error.code).toBe('TOTP_NOT_SET_UP');
    const setup = await call('POST', '/api/user/2fa/totp/setup', undefined, token);
    expect(setup.status).toBe(200);
    secret = setup.body.data.secret;
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(setup.body.data.otpauthUrl).toBe(`otpauth://totp/${PLATFORM}:ann%40mfa.test?secret=${secret}&issuer=${PLATFORM}&algorithm=SHA1&digits=6&period=30`);
    // The secret is sealed in its event, never in clear.
    const [started] = await events('TotpSetupStarted');
    expect(JSON.stringify(started)).not.toContain(secret);
    const wrong = await call('POST', '/api/user/2fa/totp/enable', { code: code(5) }, token);
    expect([wrong.status, wrong.body.error.code]).toEqual([400, 'INVALID_OTP']);
    const enabled = await call('POST', '/api/user/2fa/totp/enable', { code: code() }, token);
    expect(enabled.status).toBe(200);
    expect(enabled.body.data.totpEnabled).toBe(true);
    recoveryCodes = enabled.body.data.recoveryCodes;
    expect(recoveryCodes).toHaveLength(10);
    const [stored] = await events('TotpEnabled');
    for (const recovery of recoveryCodes) expect(JSON.stringify(stored)).not.toContain(recovery);
    expect((await call('POST', '/api/user/2fa/totp/setup', undefined, token)).body.error.code).toBe('TOTP_ALREADY_ENABLED');
    const user = await call('GET', `/api/users/${annId}`, undefined, await admin());
    expect(user.body.data.twoFactor).toEqual({ totpEnabled: true, smsEnabled: false, webauthnEnabled: false });
  });

  it('a password login answers a challenge and no tokens; the code completes it at aal2', async () => {
    nextStep();
    const answer = await login();
    expect(answer.body.data).toEqual({ mfaRequired: true, mfaToken: expect.any(String), availableMethods: ['totp', 'recovery_code'] });
    expect(answer.body.data.accessToken).toBeUndefined();
    const done = await verify(answer.body.data.mfaToken, code());
    expect(done.status).toBe(200);
    expect(done.body.data).toMatchObject({ tokenType: 'Bearer', accessToken: expect.any(String), refreshToken: expect.any(String), sessionId: expect.any(String) });
    expect(decodeJwt(done.body.data.accessToken)).toMatchObject({ sub: annId, acr: 'aal2', amr: ['pwd', 'otp', 'mfa'] });
    // Single use: the token, and the code, count once.
    expect((await verify(answer.body.data.mfaToken, code())).body.error.code).toBe('MFA_TOKEN_INVALID');
    const again = await verify(await challenge(), code());
    expect([again.status, again.body.error.code]).toEqual([400, 'INVALID_OTP']);
    const token = await admin();
    await vi.waitFor(async () => {
      const audit = (await call('GET', '/api/logs/audit?action=LOGIN_MFA_REQUIRED', undefined, token)).body.data as Record<string, any>[];
      expect(audit[0]).toMatchObject({ action: 'LOGIN_MFA_REQUIRED', userId: annId });
    });
  });

  it('a recovery code completes a sign-in once', async () => {
    const [first, second] = recoveryCodes as [string, string];
    const done = await verify(await challenge(), first.toUpperCase(), 'recovery_code');
    expect(done.status).toBe(200);
    expect(decodeJwt(done.body.data.accessToken)).toMatchObject({ acr: 'aal2', amr: ['pwd', 'mfa'] });
    expect((await verify(await challenge(), first, 'recovery_code')).body.error.code).toBe('INVALID_OTP');
    // A TOTP code is no recovery code, and the other way round.
    expect((await verify(await challenge(), second, 'totp')).body.error.code).toBe('INVALID_OTP');
    const users = await events('SecondFactorUsed');
    expect(users.map((d) => d.proof.method)).toEqual(['totp', 'recovery_code']);
  });

  it('one code on two challenges at once: exactly one sign-in', async () => {
    nextStep();
    const [first, second] = [await challenge(), await challenge()];
    const answers = await Promise.all([verify(first, code()), verify(second, code())]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 400]);
    expect(answers.find((a) => a.status === 400)!.body.error.code).toBe('INVALID_OTP');
  });

  it('a challenge of one tenant is nothing in another; a forged token is refused', async () => {
    const mfaToken = await challenge();
    nextStep();
    expect((await verify(mfaToken, code(), 'totp', OTHER)).body.error.code).toBe('MFA_TOKEN_INVALID');
    expect((await verify(`${annId}.forged`, code())).body.error.code).toBe('MFA_TOKEN_INVALID');
    expect((await verify('no-dot', code())).status).toBe(401);
    expect((await call('POST', '/api/auth/mfa/verify', { mfaToken, method: 'sms', code: '123456' })).body.error.code).toBe('VALIDATION_ERROR');
    expect((await verify(mfaToken, code())).status).toBe(200);
  });

  it('wrong codes count towards lockout; a right password in between does not reset the count', async () => {
    nextStep();
    const before = (await events('LoginFailed')).length;
    for (const expected of [400, 400, 400]) expect((await verify(await challenge(), '000000')).status).toBe(expected);
    const locked = await verify(await challenge(), '000000');
    expect([locked.status, locked.body.error.code]).toEqual([423, 'ACCOUNT_LOCKED']);
    expect((await login()).status).toBe(423);
    clock.advance(301_000);
    const reasons = (await events('LoginFailed')).slice(before).map((d) => d.reason);
    expect(reasons).toEqual(['bad_otp', 'bad_otp', 'bad_otp', 'bad_otp']);
    expect((await events('AccountLocked')).at(-1)).toMatchObject({ failures: 4 });
  });

  it('disable takes a code; then a password alone signs in again', async () => {
    nextStep();
    const mfaToken = await challenge();
    let token = (await verify(mfaToken, code())).body.data.accessToken as string;
    const disable = (typed: string) => call('POST', '/api/user/2fa/totp/disable', { code: typed }, token);
    // Wrong codes count towards lockout here too: a stolen access token buys no more guesses than a password.
    const before = (await events('LoginFailed')).length;
    expect((await disable('000000')).body.error.code).toBe('INVALID_OTP');
    for (const expected of [400, 400, 423]) expect((await disable('000000')).status).toBe(expected);
    expect((await disable(recoveryCodes[2]!)).body.error.code).toBe('ACCOUNT_LOCKED');
    expect((await events('LoginFailed')).slice(before).map((d) => d.reason)).toEqual(['bad_otp', 'bad_otp', 'bad_otp', 'bad_otp']);
    // The account's second lockout of the day lasts 30 minutes (decisions.md, Security settings).
    clock.advance(1_801_000);
    token = (await verify(await challenge(), code())).body.data.accessToken;
    const off = await disable(recoveryCodes[2]!);
    expect(off.body).toEqual({ ok: true, data: { totpEnabled: false } });
    const plain = await login();
    expect(decodeJwt(plain.body.data.accessToken)).toMatchObject({ acr: 'aal1', amr: ['pwd'] });
    expect((await call('GET', `/api/users/${annId}`, undefined, await admin())).body.data.twoFactor.totpEnabled).toBe(false);
    expect((await call('POST', '/api/user/2fa/totp/disable', { code: code() }, plain.body.data.accessToken)).body.error.code).toBe('TOTP_NOT_ENABLED');
  });

  it('an administrator without a factor is told to enrol one while requireMfaForAdmin holds', async () => {
    const boss = { email: 'boss@mfa.test', password: 'Boss-Passw0rd' };
    await call('POST', '/api/users', { ...boss, roles: ['admin'] }, await admin());
    const adminLogin = () => call('POST', '/api/auth/login', boss);
    expect((await adminLogin()).body.data.mfaEnrollmentRequired).toBe(true);
    expect((await login()).body.data).not.toHaveProperty('mfaEnrollmentRequired');
    await call('PUT', '/api/realm-settings', { section: 'login', data: { requireMfaForAdmin: false } }, await admin());
    expect((await adminLogin()).body.data).not.toHaveProperty('mfaEnrollmentRequired');
  });

  it('own-account routes need a user token', async () => {
    expect((await call('POST', '/api/user/2fa/totp/setup')).status).toBe(401);
    const foreign = await t.token({ sub: 'nobody', tenant: PLATFORM, roles: ['admin'] });
    expect((await call('POST', '/api/user/2fa/totp/setup', undefined, foreign)).body.error.code).toBe('TOKEN_INVALID');
    expect((await call('POST', '/api/user/2fa/totp/enable', { code: 12 }, foreign)).body.error.code).toBe('VALIDATION_ERROR');
  });
});
