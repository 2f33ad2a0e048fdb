import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLATFORM, startTestService, type TestService } from '../../support/service.ts';

const ADMIN = { email: 'root@platform.test', password: 'Sup3rSecret!' };
const USER = { email: 'jo@acme.test', password: 'Acme-Us3r!' };

/** Standard OAuth/OIDC clients send no x-tenant: the token endpoint and userinfo find it in the credential. */
describe('token endpoint and userinfo without x-tenant', () => {
  let t: TestService;

  const refresh = (refreshToken: string, tenant?: string) =>
    t.request({
      method: 'POST',
      url: '/api/auth/token',
      ...(tenant ? { tenant } : {}),
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
  const userinfo = (token: string, tenant?: string) => t.request({ method: 'GET', url: '/api/auth/validate', token, ...(tenant ? { tenant } : {}) });
  const login = async () => (await t.request({ method: 'POST', url: '/api/auth/login', tenant: 'acme', body: USER })).body.data;

  beforeAll(async () => {
    t = await startTestService({ env: { IAM_BOOTSTRAP_ADMIN_EMAIL: ADMIN.email, IAM_BOOTSTRAP_ADMIN_PASSWORD: ADMIN.password } });
    const root = (await t.request({ method: 'POST', url: '/api/auth/login', tenant: PLATFORM, body: ADMIN })).body.data.accessToken;
    const created = await t.request({ method: 'POST', url: '/api/tenants', tenant: PLATFORM, token: root, body: { name: 'acme', adminEmail: 'admin@acme.test', adminPassword: 'Acme-Adm1n' } });
    expect(created.status).toBe(201);
    const admin = (await t.request({ method: 'POST', url: '/api/auth/login', tenant: 'acme', body: { email: 'admin@acme.test', password: 'Acme-Adm1n' } })).body.data.accessToken;
    expect((await t.request({ method: 'POST', url: '/api/users', tenant: 'acme', token: admin, body: USER })).status).toBe(201);
  });
  afterAll(() => t.close());

  it('refreshes with no x-tenant header, and with a matching one; the new refresh token names the tenant', async () => {
    const { refreshToken } = await login();
    expect(refreshToken.startsWith('acme.')).toBe(true);
    const bare = await refresh(refreshToken);
    expect(bare.status).toBe(200);
    expect(bare.body.refresh_token.startsWith('acme.')).toBe(true);
    const claims = JSON.parse(Buffer.from(bare.body.access_token.split('.')[1], 'base64url').toString());
    expect(claims.tid).toBe('acme');
    const matching = await refresh(bare.body.refresh_token, 'acme');
    expect(matching.status).toBe(200);
  });

  it("refuses another tenant's x-tenant with 401 invalid_grant and leaves the token usable", async () => {
    const { refreshToken } = await login();
    const foreign = await refresh(refreshToken, PLATFORM);
    expect(foreign.status).toBe(401);
    expect(foreign.body).toEqual({ error: 'invalid_grant', error_description: expect.any(String) });
    expect((await refresh(refreshToken)).status).toBe(200);
  });

  it('a rewritten tenant prefix finds no session: invalid_grant, and no tenant at all is 401', async () => {
    const { refreshToken } = await login();
    const rest = refreshToken.slice('acme.'.length);
    const moved = await refresh(`${PLATFORM}.${rest}`);
    expect([moved.status, moved.body.error]).toEqual([400, 'invalid_grant']);
    const unknown = await refresh(`ghost-tenant.${rest}`);
    expect([unknown.status, unknown.body.error]).toEqual([401, 'invalid_grant']);
    // Neither attempt spent the real token.
    expect((await refresh(refreshToken)).status).toBe(200);
  });

  it('refresh tokens of the older form (no tenant prefix) still work with x-tenant, and need it', async () => {
    const { refreshToken } = await login();
    const older = refreshToken.slice('acme.'.length); // what the service issued before tokens named their tenant
    const without = await refresh(older);
    expect([without.status, without.body.error]).toEqual([400, 'invalid_request']);
    const withHeader = await refresh(older, 'acme');
    expect(withHeader.status).toBe(200);
    expect(withHeader.body.refresh_token.startsWith('acme.')).toBe(true);
  });

  it("userinfo takes the tenant from the verified token; another tenant's x-tenant is 401", async () => {
    const { accessToken } = await login();
    const bare = await userinfo(accessToken);
    expect(bare.status).toBe(200);
    expect(bare.body).toMatchObject({ email: USER.email, tenant: 'acme' });
    expect((await userinfo(accessToken, 'acme')).status).toBe(200);
    const foreign = await userinfo(accessToken, PLATFORM);
    expect([foreign.status, foreign.body.error.code]).toEqual([401, 'TOKEN_INVALID']);
    // A token whose tid was rewritten fails its signature.
    const [h, p, s] = accessToken.split('.');
    const payload = { ...JSON.parse(Buffer.from(p, 'base64url').toString()), tid: PLATFORM, aud: PLATFORM };
    const forged = `${h}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${s}`;
    expect((await userinfo(forged)).body.error.code).toBe('TOKEN_INVALID');
    expect((await userinfo('not-a-jwt')).body.error.code).toBe('TOKEN_INVALID');
  });

  it('logout finds the tenant in the token too; admin routes still require x-tenant', async () => {
    const { accessToken, refreshToken } = await login();
    expect((await t.request({ method: 'GET', url: '/api/users', token: accessToken })).body.error.code).toBe('MISSING_TENANT');
    expect((await t.request({ method: 'POST', url: '/api/auth/logout', token: accessToken })).body).toEqual({ ok: true, data: { loggedOut: true } });
    expect((await refresh(refreshToken)).body.error).toBe('invalid_grant');
  });
});
