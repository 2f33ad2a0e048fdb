import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLATFORM, startTestService, type TestService } from '../../support/service.ts';

const TENANT = 'acme';

/** Applications (OAuth clients): the admin API, secrets shown once and recorded only hashed, and the client_credentials grant. */
describe('applications and client credentials', () => {
  let t: TestService;
  const admin = () => t.token({ sub: 'acme-admin', tenant: TENANT, roles: ['admin'] });
  const call = async (method: string, url: string, body?: unknown) => t.request({ method, url, tenant: TENANT, body, token: await admin() });
  const form = (params: Record<string, string>, headers: Record<string, string> = {}, tenant?: string) =>
    t.request({
      method: 'POST',
      url: '/api/auth/token',
      ...(tenant ? { tenant } : {}),
      body: new URLSearchParams(params).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    });
  const basic = (id: string, secret: string) => ({ authorization: `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}` });

  beforeAll(async () => {
    t = await startTestService();
    const root = await t.token({ sub: 'root', tenant: PLATFORM, roles: ['admin'] });
    for (const name of [TENANT, 'other']) {
      expect((await t.request({ method: 'POST', url: '/api/tenants', tenant: PLATFORM, token: root, body: { name } })).status).toBe(201);
    }
  });
  afterAll(() => t.close());

  it('creates, reads, lists, updates and deletes; the secret is shown once and never recorded in clear', async () => {
    const created = await call('POST', '/api/applications', { name: 'portal', type: 'web', redirectUris: ['https://portal.example/cb'] });
    expect(created.status).toBe(201);
    const app = created.body.data;
    expect(app).toMatchObject({ name: 'portal', type: 'web', grantTypes: ['authorization_code', 'refresh_token'], clientSecret: expect.any(String) });
    expect(app.clientId).toBe(`${TENANT}.${app.id}`);
    const read = await call('GET', `/api/applications/${app.id}`);
    expect(read.body.data).not.toHaveProperty('clientSecret');
    expect(read.body.data.redirectUris).toEqual(['https://portal.example/cb']);
    const updated = await call('PUT', `/api/applications/${app.id}`, { allowedOrigins: ['https://portal.example'] });
    expect(updated.body.data.allowedOrigins).toEqual(['https://portal.example']);
    const listed = await call('GET', '/api/applications?limit=10');
    expect(listed.body.data.pagination).toMatchObject({ page: 1, limit: 10 });
    expect(listed.body.data.data.map((a: { id: string }) => a.id)).toContain(app.id);
    const v1 = await call('GET', '/api/v1/applications?pageSize=5');
    expect(v1.body.pagination).toMatchObject({ page: 1, pageSize: 5 });

    const rotated = await call('POST', `/api/applications/${app.id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.data.clientSecret).not.toBe(app.clientSecret);
    expect((await call('POST', `/api/v1/applications/${app.id}/rotate-secret`)).status).toBe(404);

    // Neither secret appears in the log, the audit log, or a read model.
    for (const secret of [app.clientSecret, rotated.body.data.clientSecret]) {
      const { rows } = await t.db.pool.query(
        "select 1 from events where data::text like '%' || $1 || '%' union all select 1 from audit_log where metadata::text like '%' || $1 || '%' union all select 1 from applications where row(applications.*)::text like '%' || $1 || '%'",
        [secret],
      );
      expect(rows).toEqual([]);
    }
    const audit = await t.db.pool.query<{ action: string }>('select action from audit_log where tenant_id = $1 and resource_id = $2 order by created_at, id', [TENANT, app.id]);
    expect(audit.rows.map((r) => r.action)).toEqual(['APPLICATION_CREATED', 'APPLICATION_UPDATED', 'APPLICATION_SECRET_ROTATED']);

    expect((await call('DELETE', `/api/applications/${app.id}`)).status).toBe(200);
    expect((await call('GET', `/api/applications/${app.id}`)).status).toBe(404);
  });

  it('refuses settings that do not fit the type; public clients have no secret to rotate', async () => {
    const spa = await call('POST', '/api/applications', { name: 'spa', type: 'spa', redirectUris: ['http://localhost:5173/cb'] });
    expect(spa.status).toBe(201);
    expect(spa.body.data.clientSecret).toBeNull();
    expect((await call('POST', `/api/applications/${spa.body.data.id}/rotate-secret`)).body.error.code).toBe('APPLICATION_IS_PUBLIC');
    const bad = await call('POST', '/api/applications', { name: 'x', type: 'spa', grantTypes: ['client_credentials'], redirectUris: ['http://evil.example/cb'] });
    expect([bad.status, bad.body.error.code]).toEqual([400, 'VALIDATION_ERROR']);
    expect(bad.body.error.details.map((d: { path: string }) => d.path).sort()).toEqual(['grantTypes.0', 'redirectUris.0']);
    const noPermission = await t.request({ method: 'GET', url: '/api/applications', tenant: TENANT, token: await t.token({ sub: 'u', tenant: TENANT, roles: ['user'] }) });
    expect(noPermission.status).toBe(403);
  });

  it('client_credentials: basic or post authentication, scopes within the application, admin routes honour the scope', async () => {
    const { clientId, clientSecret } = (await call('POST', '/api/applications', { name: 'batch', type: 'm2m', scopes: ['manage:users', 'view:audit'] })).body.data;
    const viaBasic = await form({ grant_type: 'client_credentials', scope: 'manage:users' }, basic(clientId, clientSecret));
    expect(viaBasic.status).toBe(200);
    expect(viaBasic.headers['cache-control']).toBe('no-store');
    expect(viaBasic.body).toEqual({ access_token: expect.any(String), token_type: 'Bearer', expires_in: 900, scope: 'manage:users' });
    const claims = JSON.parse(Buffer.from(viaBasic.body.access_token.split('.')[1], 'base64url').toString());
    expect(claims).toMatchObject({ sub: clientId, client_id: clientId, tid: TENANT, scope: 'manage:users', roles: [] });
    const token = viaBasic.body.access_token;
    expect((await t.request({ method: 'GET', url: '/api/users', tenant: TENANT, token })).status).toBe(200);
    expect((await t.request({ method: 'GET', url: '/api/roles', tenant: TENANT, token })).status).toBe(403);

    const viaPost = await form({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret });
    expect(viaPost.body.scope).toBe('manage:users view:audit');
    expect(viaPost.body).not.toHaveProperty('refresh_token');

    const wider = await form({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret, scope: 'manage:users admin:all' });
    expect([wider.status, wider.body.error]).toEqual([400, 'invalid_scope']);
    const wrong = await form({ grant_type: 'client_credentials' }, basic(clientId, 'not-the-secret'));
    expect([wrong.status, wrong.body.error, wrong.headers['www-authenticate']]).toEqual([401, 'invalid_client', 'Basic realm="token"']);
    const none = await form({ grant_type: 'client_credentials', client_id: clientId });
    expect([none.status, none.body.error]).toEqual([401, 'invalid_client']);
    const twice = await form({ grant_type: 'client_credentials', client_secret: clientSecret }, basic(clientId, clientSecret));
    expect([twice.status, twice.body.error]).toEqual([400, 'invalid_request']);

    // A client of acme with x-tenant other, or its id moved to the other tenant: refused, never a token.
    const foreign = await form({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret }, {}, 'other');
    expect([foreign.status, foreign.body.error]).toEqual([401, 'invalid_grant']);
    const moved = await form({ grant_type: 'client_credentials', client_id: clientId.replace(`${TENANT}.`, 'other.'), client_secret: clientSecret });
    expect([moved.status, moved.body.error]).toEqual([401, 'invalid_client']);

    const web = (await call('POST', '/api/applications', { name: 'site', type: 'web', redirectUris: ['https://site.example/cb'] })).body.data;
    const unauthorized = await form({ grant_type: 'client_credentials', client_id: web.clientId, client_secret: web.clientSecret });
    expect([unauthorized.status, unauthorized.body.error]).toEqual([400, 'unauthorized_client']);
  });

  it("a deleted application's unexpired client_credentials token no longer reaches admin routes", async () => {
    const app = (await call('POST', '/api/applications', { name: 'retired-robot', type: 'm2m', scopes: ['manage:users'] })).body.data;
    const token = (await form({ grant_type: 'client_credentials', client_id: app.clientId, client_secret: app.clientSecret })).body.access_token;
    expect((await t.request({ method: 'GET', url: '/api/users', tenant: TENANT, token })).status).toBe(200);
    expect((await call('DELETE', `/api/applications/${app.id}`)).status).toBe(200);
    const after = await t.request({ method: 'GET', url: '/api/users', tenant: TENANT, token });
    expect([after.status, after.body.error?.code]).toEqual([401, 'TOKEN_INVALID']);
  });

  it('a manage:applications holder cannot mint a client with permissions beyond its own (admin:all in the platform tenant)', async () => {
    const root = await t.token({ sub: 'root', tenant: PLATFORM, roles: ['admin'] });
    const asRoot = (method: string, url: string, body?: unknown) => t.request({ method, url, tenant: PLATFORM, token: root, body });
    expect((await asRoot('POST', '/api/roles', { name: 'integrator', permissions: ['manage:applications'] })).status).toBe(201);
    const integrator = await t.token({ sub: 'integrator-1', tenant: PLATFORM, roles: ['integrator'] });
    const asIntegrator = (method: string, url: string, body?: unknown) => t.request({ method, url, tenant: PLATFORM, token: integrator, body });
    expect((await asIntegrator('GET', '/api/tenants')).status).toBe(403);

    // Creating a client whose scope holds admin:all would hand the integrator the platform.
    const created = await asIntegrator('POST', '/api/applications', { name: 'backdoor', type: 'm2m', scopes: ['admin:all'] });
    expect.soft([created.status, created.body.error?.code]).toEqual([403, 'PERMISSION_DENIED']);
    if (created.status === 201) {
      const { clientId, clientSecret } = created.body.data;
      const token = (await form({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret })).body.access_token;
      const tenant = await t.request({ method: 'POST', url: '/api/tenants', tenant: PLATFORM, token, body: { name: 'seized' } });
      expect(tenant.status, 'the integrator created a tenant through its own client').not.toBe(201);
    }

    // Nor by widening a client it may create, nor by taking over an administrator's wider client.
    const narrow = await asIntegrator('POST', '/api/applications', { name: 'narrow', type: 'm2m', scopes: ['manage:applications'] });
    expect(narrow.status).toBe(201);
    const widened = await asIntegrator('PUT', `/api/applications/${narrow.body.data.id}`, { scopes: ['admin:all'] });
    expect.soft([widened.status, widened.body.error?.code]).toEqual([403, 'PERMISSION_DENIED']);
    const wide = (await asRoot('POST', '/api/applications', { name: 'ops-robot', type: 'm2m', scopes: ['admin:all'] })).body.data;
    const rotated = await asIntegrator('POST', `/api/applications/${wide.id}/rotate-secret`);
    expect([rotated.status, rotated.body.error?.code]).toEqual([403, 'PERMISSION_DENIED']);
  });
});
