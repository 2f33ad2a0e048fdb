import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInstanceBeside } from './support/second-instance.ts';
import { PLATFORM, startTestService, type TestService } from './support/service.ts';

/**
 * Two service instances on one database. Instance B answers tenants, role permissions, settings
 * and userinfo from its own caches, and sees every change made through instance A once its
 * projections have applied the change's events (the projection lag), with no restart.
 */
describe('per-instance caches across two instances', () => {
  let a: TestService;
  let b: TestService;
  const statements: string[] = [];
  const ADMIN = { email: 'root@caches.test', password: 'R00t-Passw0rd' };

  beforeAll(async () => {
    a = await startTestService({ env: { IAM_BOOTSTRAP_ADMIN_EMAIL: ADMIN.email, IAM_BOOTSTRAP_ADMIN_PASSWORD: ADMIN.password } });
    // B has a connection pool of its own, whose statements the test records.
    b = await startInstanceBeside(a, (text) => statements.push(text));
  });
  afterAll(async () => {
    await b?.close();
    await b?.db.pool.end();
    await a?.close();
  });

  /** Waits until B's named projections have applied everything A wrote so far. */
  const bCaughtUp = async (...projections: string[]) => {
    expect(await b.service.runner.waitFor(await a.store.lastWrittenPosition(), 10_000, projections)).toBe(true);
  };
  /** The statements B sends to the database while `work` runs. */
  const statementsDuring = async (work: () => Promise<void>) => {
    const from = statements.length;
    await work();
    return statements.slice(from);
  };
  const READ_MODEL_LOOKUP = /\bfrom (roles|tenants|realm_settings|users)\b/;

  it('a role losing a permission is refused on the other instance once its roles projection has the change', async () => {
    const root = await a.token({ sub: 'root', tenant: PLATFORM, roles: ['admin'] });
    const role = await a.request({ method: 'POST', url: '/api/roles', tenant: PLATFORM, token: root, body: { name: 'auditor', permissions: ['view:audit'] } });
    expect(role.status).toBe(201);
    const auditor = await a.token({ sub: 'someone', tenant: PLATFORM, roles: ['auditor'] });
    // B's cache is dropped when B's own roles projection applies the creation; warm it after that.
    await bCaughtUp('roles');
    const listAudit = () => b.request({ method: 'GET', url: '/api/logs/audit?limit=1', tenant: PLATFORM, token: auditor });
    expect((await listAudit()).status).toBe(200);

    // Warm: authenticating and authorizing reads neither the tenants nor the roles read model.
    const sent = await statementsDuring(async () => {
      for (let i = 0; i < 3; i += 1) expect((await listAudit()).status).toBe(200);
    });
    expect(sent.filter((text) => READ_MODEL_LOOKUP.test(text))).toEqual([]);

    const revoked = await a.request({ method: 'PUT', url: `/api/roles/${role.body.data.id}`, tenant: PLATFORM, token: root, body: { permissions: [] } });
    expect(revoked.status).toBe(200);
    await bCaughtUp('roles');
    const refused = await listAudit();
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('PERMISSION_DENIED');
  });

  it('a deleted tenant is unknown to the other instance once its tenants projection has the deletion', async () => {
    const root = await a.token({ sub: 'root', tenant: PLATFORM, roles: ['admin'] });
    const created = await a.request({ method: 'POST', url: '/api/tenants', tenant: PLATFORM, token: root, body: { name: 'gone-soon' } });
    expect(created.status).toBe(201);
    const tenantAdmin = await a.token({ sub: 'boss', tenant: 'gone-soon', roles: ['admin'] });
    const listRoles = () => b.request({ method: 'GET', url: '/api/roles', tenant: 'gone-soon', token: tenantAdmin });
    // Warm B's caches only after its own projections applied the creation (applying drops entries).
    await bCaughtUp('roles', 'tenants');
    expect((await listRoles()).status).toBe(200);
    const sent = await statementsDuring(async () => {
      expect((await listRoles()).status).toBe(200);
    });
    expect(sent.filter((text) => READ_MODEL_LOOKUP.test(text))).toEqual([]);

    expect((await a.request({ method: 'DELETE', url: '/api/tenants/gone-soon', tenant: PLATFORM, token: root })).status).toBe(200);
    await bCaughtUp('tenants');
    const gone = await listRoles();
    expect(gone.status).toBe(404);
    expect(gone.body.error.code).toBe('TENANT_NOT_FOUND');
  });

  it('settings changed on one instance are in force on the other: new logins there get the new token lifetime', async () => {
    const root = await a.token({ sub: 'root', tenant: PLATFORM, roles: ['admin'] });
    const login = () => b.request({ method: 'POST', url: '/api/auth/login', tenant: PLATFORM, body: ADMIN });
    expect((await login()).body.data.expiresIn).toBe(900);
    const put = await a.request({ method: 'PUT', url: '/api/realm-settings', tenant: PLATFORM, token: root, body: { section: 'tokens', data: { accessTokenExpiry: 600 } } });
    expect(put.status).toBe(200);
    await bCaughtUp('settings');
    expect((await login()).body.data.expiresIn).toBe(600);
  });

  it('userinfo on the other instance answers from its cached user view, and shows a profile change once its users projection has it', async () => {
    const root = await a.token({ sub: 'root', tenant: PLATFORM, roles: ['admin'] });
    const user = { email: 'ada@caches.test', password: 'Ada-Passw0rd!', firstName: 'Ada' };
    const created = await a.request({ method: 'POST', url: '/api/users', tenant: PLATFORM, token: root, body: user });
    expect(created.status).toBe(201);
    const token = (await a.request({ method: 'POST', url: '/api/auth/login', tenant: PLATFORM, body: { email: user.email, password: user.password } })).body.data.accessToken;
    await bCaughtUp('users');
    const userinfo = () => b.request({ method: 'GET', url: '/api/auth/validate', token });
    expect((await userinfo()).body).toMatchObject({ sub: created.body.data.id, email: user.email, given_name: 'Ada', roles: ['user'] });
    const sent = await statementsDuring(async () => {
      expect((await userinfo()).status).toBe(200);
    });
    expect(sent.filter((text) => READ_MODEL_LOOKUP.test(text))).toEqual([]);

    const renamed = await a.request({ method: 'PUT', url: `/api/users/${created.body.data.id}`, tenant: PLATFORM, token: root, body: { firstName: 'Augusta' } });
    expect(renamed.status).toBe(200);
    await bCaughtUp('users');
    expect((await userinfo()).body.given_name).toBe('Augusta');
  });

  it("userinfo on the other instance shows a role's new name once its roles projection has the rename", async () => {
    const root = await a.token({ sub: 'root', tenant: PLATFORM, roles: ['admin'] });
    const role = await a.request({ method: 'POST', url: '/api/roles', tenant: PLATFORM, token: root, body: { name: 'reader' } });
    expect(role.status).toBe(201);
    const user = { email: 'cy@caches.test', password: 'Cy-Passw0rd!', roles: ['reader'] };
    expect((await a.request({ method: 'POST', url: '/api/users', tenant: PLATFORM, token: root, body: user })).status).toBe(201);
    const token = (await a.request({ method: 'POST', url: '/api/auth/login', tenant: PLATFORM, body: { email: user.email, password: user.password } })).body.data.accessToken;
    await bCaughtUp('users', 'roles');
    const userinfo = () => b.request({ method: 'GET', url: '/api/auth/validate', token });
    expect((await userinfo()).body.roles).toEqual(['reader']);
    expect((await userinfo()).body.roles).toEqual(['reader']);

    const renamed = await a.request({ method: 'PUT', url: `/api/roles/${role.body.data.id}`, tenant: PLATFORM, token: root, body: { name: 'librarian' } });
    expect(renamed.status).toBe(200);
    await bCaughtUp('roles');
    expect((await userinfo()).body.roles).toEqual(['librarian']);
  });

  it('a user disabled on one instance can no longer refresh on the other once its users projection has the change', async () => {
    const root = await a.token({ sub: 'root', tenant: PLATFORM, roles: ['admin'] });
    const user = { email: 'bob@caches.test', password: 'Bob-Passw0rd!' };
    const created = await a.request({ method: 'POST', url: '/api/users', tenant: PLATFORM, token: root, body: user });
    const login = (await a.request({ method: 'POST', url: '/api/auth/login', tenant: PLATFORM, body: user })).body.data;
    await bCaughtUp('users');
    const refresh = (refreshToken: string) => b.request({ method: 'POST', url: '/api/auth/token', body: { grant_type: 'refresh_token', refresh_token: refreshToken } });
    const first = await refresh(login.refreshToken);
    expect(first.status).toBe(200);

    expect((await a.request({ method: 'PUT', url: `/api/users/${created.body.data.id}`, tenant: PLATFORM, token: root, body: { enabled: false } })).status).toBe(200);
    await bCaughtUp('users');
    const refused = await refresh(first.body.refresh_token);
    expect(refused.body).toEqual({ error: 'invalid_grant', error_description: 'The account is no longer active' });
  });
  it("a signing key rotated on one instance is in the other instance's JWKS once tokens are signed with it (OIDC Core 10.1.1)", async () => {
    const root = await a.token({ sub: 'root', tenant: PLATFORM, roles: ['admin'] });
    const kids = async (on: TestService) => (await on.request({ method: 'GET', url: '/.well-known/jwks.json' })).body.keys.map((key: { kid: string }) => key.kid);
    expect(await kids(b)).toEqual(await kids(a));
    const rotated = await a.request({ method: 'POST', url: '/api/admin/signing-keys/rotate', tenant: PLATFORM, token: root });
    expect(rotated.status).toBe(200);
    // A signs with the new key at once: a relying party seeing its kid fetches the JWKS again,
    // from whichever instance the load balancer picks.
    expect(await kids(a)).toContain(rotated.body.data.kid);
    // B reads the key stream again for a JWKS request at most once a second.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect(await kids(b)).toContain(rotated.body.data.kid);
  });
});
