import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { base32Decode, timeStep, totpCode } from '../../../src/modules/mfa/totp.ts';
import { startInstanceBeside } from '../../support/second-instance.ts';
import { PLATFORM, startTestService, type TestService } from '../../support/service.ts';

const LEE = { email: 'lee@mfa.test', password: 'Lee-Passw0rd' };

/** Two instances on one store: each folds the second-factor stream from where it last saw it. */
describe('two-factor across two instances', () => {
  let a: TestService;
  let b: TestService;
  let secret: string;
  // Each use takes a later step within the one step of drift: a code is accepted once.
  let lastOffset = -2;
  const freshCode = () => totpCode(base32Decode(secret), timeStep(new Date()) + ++lastOffset);
  const login = (t: TestService) => t.request({ method: 'POST', url: '/api/auth/login', tenant: PLATFORM, body: LEE });

  beforeAll(async () => {
    a = await startTestService({ env: { ARGON2_MEMORY_KIB: '1024', ARGON2_ITERATIONS: '1' } });
    b = await startInstanceBeside(a, () => {}, { ARGON2_MEMORY_KIB: '1024', ARGON2_ITERATIONS: '1' });
    const admin = await a.token({ sub: 'admin', tenant: PLATFORM, roles: ['admin'] });
    expect((await a.request({ method: 'POST', url: '/api/users', tenant: PLATFORM, token: admin, body: LEE })).status).toBe(201);
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });

  it('set up on one, enabled on the other: both ask for the code at every login, and both complete it', async () => {
    const token = (await login(a)).body.data.accessToken;
    secret = (await a.request({ method: 'POST', url: '/api/user/2fa/totp/setup', tenant: PLATFORM, token })).body.data.secret;
    expect((await b.request({ method: 'POST', url: '/api/user/2fa/totp/enable', tenant: PLATFORM, token, body: { code: freshCode() } })).status).toBe(200);
    for (const [first, second] of [[b, a], [a, b]] as const) {
      const challenged = await login(first);
      expect(challenged.body.data).toMatchObject({ mfaRequired: true });
      const done = await second.request({ method: 'POST', url: '/api/auth/mfa/verify', tenant: PLATFORM, body: { mfaToken: challenged.body.data.mfaToken, method: 'totp', code: freshCode() } });
      expect(done.status, JSON.stringify(done.body)).toBe(200);
      expect(decodeJwt(done.body.data.accessToken)).toMatchObject({ acr: 'aal2' });
    }
  });
});
