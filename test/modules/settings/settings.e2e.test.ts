import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLATFORM, startTestService, type TestService } from '../../support/service.ts';

describe('security settings', () => {
  let t: TestService;
  let admin: string;
  const put = (body: unknown) => t.request({ method: 'PUT', url: '/api/realm-settings', tenant: PLATFORM, token: admin, body });
  beforeAll(async () => {
    t = await startTestService({ env: { IAM_BOOTSTRAP_ADMIN_EMAIL: 'root@p.test', IAM_BOOTSTRAP_ADMIN_PASSWORD: 'R00t-Passw' } });
    admin = await t.token({ sub: 'admin', tenant: PLATFORM, roles: ['admin'] });
  });
  afterAll(() => t.close());

  it('reads the spec defaults, flat, updated when the tenant was created', async () => {
    const response = await t.request({ method: 'GET', url: '/api/realm-settings', tenant: PLATFORM, token: admin });
    const tenant = await t.request({ method: 'GET', url: `/api/tenants/${PLATFORM}`, tenant: PLATFORM, token: admin });
    expect(response.body).toEqual({
      ok: true,
      data: {
        sessionMaxLifetime: 86400, sessionIdleTimeout: 3600, refreshTokenExpiry: 604800, accessTokenExpiry: 900,
        maxConcurrentSessions: 5, requireMfaForAdmin: true, passwordMinLength: 8, passwordRequireUppercase: true,
        passwordRequireLowercase: true, passwordRequireNumbers: true, passwordRequireSpecial: false, passwordHistoryCount: 5,
        lockoutThreshold: 5, lockoutDuration: 900, updatedAt: tenant.body.data.createdAt,
      },
    });
  });

  it('updates one section and answers the nested settings with {success, data}', async () => {
    const response = await put({ section: 'tokens', data: { accessTokenExpiry: 300 } });
    expect(response.status).toBe(200);
    expect(response.body.success).toBe(true);
    expect(response.body.data.tokens).toEqual({ accessTokenExpiry: 300, refreshTokenExpiry: 604800, sessionMaxLifetime: 86400, sessionIdleTimeout: 3600 });
    expect(Object.keys(response.body.data).sort()).toEqual(['bruteForce', 'general', 'login', 'security', 'tokenClaims', 'tokens']);
    const flat = await t.request({ method: 'GET', url: '/api/realm-settings', tenant: PLATFORM, token: admin });
    expect(flat.body.data.accessTokenExpiry).toBe(300);
    expect(flat.body.data.updatedAt).toEqual(expect.any(String));
    // New logins use the new lifetime.
    const login = await t.request({ method: 'POST', url: '/api/auth/login', tenant: PLATFORM, body: { email: 'root@p.test', password: 'R00t-Passw' } });
    expect(login.body.data.expiresIn).toBe(300);
  });

  it('enforces the password policy of the tenant', async () => {
    await put({ section: 'security', data: { passwordMinLength: 12, passwordRequireSpecial: true } });
    const weak = await t.request({ method: 'POST', url: '/api/users', tenant: PLATFORM, token: admin, body: { email: 'p@p.test', password: 'Abcdefgh12' } });
    expect(weak.body.error.message).toBe('Password below the minimum length');
    const ok = await t.request({ method: 'POST', url: '/api/users', tenant: PLATFORM, token: admin, body: { email: 'p@p.test', password: 'Abcdefgh12!x' } });
    expect(ok.status).toBe(201);
  });

  it('rejects unknown sections, unknown fields, out-of-range and cross-field values, naming the field', async () => {
    const unknownSection = await put({ section: 'colors', data: {} });
    // Errors keep the route's family, like its success: {success: false, error}.
    expect(unknownSection.body).toEqual({ success: false, error: expect.objectContaining({ code: 'VALIDATION_ERROR' }) });
    const unknownField = await put({ section: 'tokens', data: { passwordMinLength: 9 } });
    expect(unknownField.body.error.details[0].path).toBe('data.passwordMinLength');
    for (const [section, data, field] of [
      ['tokens', { accessTokenExpiry: 59 }, 'accessTokenExpiry'],
      ['tokens', { refreshTokenExpiry: 2_592_001 }, 'refreshTokenExpiry'],
      ['login', { maxConcurrentSessions: 101 }, 'maxConcurrentSessions'],
      ['security', { passwordMinLength: 5 }, 'passwordMinLength'],
      ['bruteForce', { lockoutThreshold: 0 }, 'lockoutThreshold'],
      ['bruteForce', { lockoutDuration: 86_401 }, 'lockoutDuration'],
      ['tokens', { sessionIdleTimeout: 90_000 }, 'sessionIdleTimeout'],
      ['tokens', { sessionMaxLifetime: 200 }, 'sessionMaxLifetime'],
      ['login', { requireMfaForAdmin: 'yes' }, 'requireMfaForAdmin'],
    ] as const) {
      const response = await put({ section, data });
      expect([field, response.status, response.body.error.code]).toEqual([field, 400, 'VALIDATION_ERROR']);
      expect(response.body.error.details.map((d: { path: string }) => d.path)).toContain(`data.${field}`);
    }
    const settings = await t.request({ method: 'GET', url: '/api/realm-settings', tenant: PLATFORM, token: admin });
    expect(settings.body.data).toMatchObject({ accessTokenExpiry: 300, sessionIdleTimeout: 3600, lockoutThreshold: 5 });
  });

  it('adds the tenant token claims from user fields, never replacing service claims', async () => {
    const response = await put({ section: 'tokenClaims', data: { claims: [{ claim: 'email', from: 'email' }, { claim: 'sub', from: 'username' }] } });
    expect(response.body.data.tokenClaims.claims).toHaveLength(2);
    const login = await t.request({ method: 'POST', url: '/api/auth/login', tenant: PLATFORM, body: { email: 'root@p.test', password: 'R00t-Passw' } });
    const payload = JSON.parse(Buffer.from(login.body.data.accessToken.split('.')[1], 'base64url').toString());
    expect(payload.email).toBe('root@p.test');
    expect(payload.sub).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('requires admin:all', async () => {
    const user = await t.token({ sub: 'u', tenant: PLATFORM, roles: ['user'] });
    expect((await t.request({ method: 'GET', url: '/api/realm-settings', tenant: PLATFORM, token: user })).status).toBe(403);
  });
});
