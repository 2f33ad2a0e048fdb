import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLATFORM, startTestService, type TestService } from '../../support/service.ts';
import { PERMISSIONS } from '../../../src/modules/roles/index.ts';

describe('tenants over HTTP', () => {
  let t: TestService;
  let admin: string;
  beforeAll(async () => {
    t = await startTestService();
    admin = await t.token({ sub: 'platform-admin', tenant: PLATFORM, roles: ['admin'] });
  });
  afterAll(() => t.close());

  it('bootstraps the platform tenant with roles admin and user', async () => {
    const { rows } = await t.db.pool.query('select name, permissions from roles where tenant_id = $1 order by name', [PLATFORM]);
    expect(rows.map((r) => r.name)).toEqual(['admin', 'user']);
    expect(rows[0].permissions).toContain('admin:all');
    expect(rows[1].permissions).toEqual([]);
  });

  it('bootstrap is idempotent on restart', async () => {
    const count = async (type: string) =>
      (await t.db.pool.query('select count(*)::int as n from events where type = $1', [type])).rows[0].n;
    const before = { tenants: await count('TenantCreated'), keys: await count('SigningKeyAdded') };
    const again = await startTestService({ db: t.db });
    await again.close();
    expect({ tenants: await count('TenantCreated'), keys: await count('SigningKeyAdded') }).toEqual(before);
    expect(before).toEqual({ tenants: 1, keys: 1 });
  });

  it('creates a tenant (201), reads it back at once, lists, updates and deletes it', async () => {
    const created = await t.request({ method: 'POST', url: '/api/tenants', tenant: PLATFORM, token: admin, body: { name: 'acme', displayName: 'Acme Inc' } });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      ok: true,
      data: { id: expect.any(String), name: 'acme', displayName: 'Acme Inc', createdAt: expect.any(String), updatedAt: expect.any(String) },
    });
    const id = created.body.data.id;

    const read = await t.request({ method: 'GET', url: `/api/tenants/${id}`, tenant: PLATFORM, token: admin });
    expect(read.body.data.name).toBe('acme');
    const list = await t.request({ method: 'GET', url: '/api/tenants', tenant: PLATFORM, token: admin });
    expect(list.body.ok).toBe(true);
    expect(list.body.data.map((x: { name: string }) => x.name)).toEqual(expect.arrayContaining(['acme', 'platform']));

    const roles = await t.db.pool.query("select name from roles where tenant_id = 'acme' order by name");
    expect(roles.rows.map((r) => r.name)).toEqual(['admin', 'user']);

    const updated = await t.request({ method: 'PUT', url: `/api/tenants/${id}`, tenant: PLATFORM, token: admin, body: { displayName: 'Acme' } });
    expect(updated.body.data.displayName).toBe('Acme');

    const deleted = await t.request({ method: 'DELETE', url: `/api/tenants/${id}`, tenant: PLATFORM, token: admin });
    expect(deleted.body).toEqual({ ok: true, data: { deleted: true } });
    expect((await t.request({ method: 'GET', url: `/api/tenants/${id}`, tenant: PLATFORM, token: admin })).status).toBe(404);
    expect((await t.request({ method: 'GET', url: '/api/tenants', tenant: 'acme', token: admin })).body.error.code).toBe('TENANT_NOT_FOUND');
  });

  it('answers TENANT_EXISTS 409 for a taken name, also under a race, and never reuses a deleted name', async () => {
    const outcomes = await Promise.all(
      [1, 2, 3].map(() => t.request({ method: 'POST', url: '/api/tenants', tenant: PLATFORM, token: admin, body: { name: 'globex' } })),
    );
    expect(outcomes.map((o) => o.status).sort()).toEqual([201, 409, 409]);
    expect(outcomes.find((o) => o.status === 409)!.body.error.code).toBe('TENANT_EXISTS');
    const { rows } = await t.db.pool.query("select count(*)::int as n from events where type = 'TenantCreated' and data->>'name' = 'globex'");
    expect(rows[0].n).toBe(1);
    const roleEvents = await t.db.pool.query("select count(*)::int as n from events where type = 'RoleCreated' and metadata->>'tenantId' = 'globex'");
    expect(roleEvents.rows[0].n).toBe(2);
  });

  it('v1 layer: same handlers, v1 envelopes and safe error messages', async () => {
    const list = await t.request({ method: 'GET', url: '/api/v1/tenants', tenant: PLATFORM, token: admin });
    expect(list.body.ok).toBe(true);
    expect(list.body.pagination).toEqual({ page: 1, pageSize: list.body.data.length, total: list.body.data.length, totalPages: 1 });
    const bad = await t.request({ method: 'POST', url: '/api/v1/tenants', tenant: PLATFORM, token: admin, body: { name: 'NO SPACES', extra: 'secret-value' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('VALIDATION_ERROR');
    expect(bad.body.error.message).toBe('The request is invalid');
    expect(bad.body.error.details.length).toBeGreaterThan(0);
    expect(JSON.stringify(bad.body)).not.toContain('secret-value');
    expect(JSON.stringify(bad.body)).not.toContain('NO SPACES');
    const missing = await t.request({ method: 'DELETE', url: '/api/v1/tenants/nope', tenant: PLATFORM, token: admin });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ ok: false, error: { code: 'NOT_FOUND', message: 'The resource was not found', details: [] } });
  });

  it('guards: missing tenant 400, unknown tenant 404, no token 401, other tenant token 401, no permission 403', async () => {
    const noTenant = await t.request({ method: 'GET', url: '/api/tenants', token: admin });
    expect(noTenant.status).toBe(400);
    expect(noTenant.body).toEqual({ ok: false, error: { code: 'MISSING_TENANT', message: expect.any(String) } });
    expect((await t.request({ method: 'GET', url: '/api/tenants', tenant: 'no-such-tenant', token: admin })).body.error.code).toBe('TENANT_NOT_FOUND');
    const anonymous = await t.request({ method: 'GET', url: '/api/tenants', tenant: PLATFORM });
    expect([anonymous.status, anonymous.body.error.code]).toEqual([401, 'TOKEN_INVALID']);

    await t.request({ method: 'POST', url: '/api/tenants', tenant: PLATFORM, token: admin, body: { name: 'initech' } });
    const initechAdmin = await t.token({ sub: 'u1', tenant: 'initech', roles: ['admin'] });
    const crossTenant = await t.request({ method: 'GET', url: '/api/tenants', tenant: PLATFORM, token: initechAdmin });
    expect([crossTenant.status, crossTenant.body.error.code]).toEqual([401, 'TOKEN_INVALID']);
    // admin:all in a non-platform tenant does not manage tenants.
    const notPlatform = await t.request({ method: 'GET', url: '/api/tenants', tenant: 'initech', token: initechAdmin });
    expect([notPlatform.status, notPlatform.body.error.code]).toEqual([403, 'PERMISSION_DENIED']);
    const user = await t.token({ sub: 'u2', tenant: PLATFORM, roles: ['user'] });
    expect((await t.request({ method: 'GET', url: '/api/tenants', tenant: PLATFORM, token: user })).status).toBe(403);
  });

  it('bad input: malformed JSON, wrong types, unknown fields, huge bodies get the envelope and append nothing', async () => {
    const before = (await t.db.pool.query('select count(*)::int as n from events')).rows[0].n;
    const malformed = await t.request({ method: 'POST', url: '/api/tenants', tenant: PLATFORM, token: admin, body: '{"name": ', headers: { 'content-type': 'application/json' } });
    expect([malformed.status, malformed.body.error.code]).toEqual([400, 'VALIDATION_ERROR']);
    const wrongType = await t.request({ method: 'POST', url: '/api/tenants', tenant: PLATFORM, token: admin, body: { name: 42 } });
    expect(wrongType.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ path: 'body.name', message: expect.any(String) }] });
    const unknownField = await t.request({ method: 'POST', url: '/api/tenants', tenant: PLATFORM, token: admin, body: { name: 'okname', color: 'red' } });
    expect(unknownField.status).toBe(400);
    const huge = await t.request({ method: 'POST', url: '/api/tenants', tenant: PLATFORM, token: admin, body: { name: 'big', displayName: 'x'.repeat(2_000_000) } });
    expect([huge.status, huge.body.error.code]).toEqual([413, 'PAYLOAD_TOO_LARGE']);
    expect((await t.db.pool.query('select count(*)::int as n from events')).rows[0].n).toBe(before);
    expect((await t.request({ method: 'GET', url: '/health/live' })).status).toBe(200);
  });
});

describe('system endpoints', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService();
  });
  afterAll(() => t.close());

  it('health, readiness, metrics with projection lag, OpenAPI, discovery and JWKS', async () => {
    expect((await t.request({ method: 'GET', url: '/health/live' })).body).toEqual({ status: 'ok' });
    expect((await t.request({ method: 'GET', url: '/health/ready' })).status).toBe(200);
    const metrics = await t.request({ method: 'GET', url: '/metrics' });
    expect(metrics.body).toContain('iam_projection_lag_events{projection="tenants"}');
    const openapi = await t.request({ method: 'GET', url: '/api/openapi.json' });
    expect(openapi.body.openapi).toBe('3.1.0');
    expect(Object.keys(openapi.body.paths)).toEqual(expect.arrayContaining(['/api/tenants', '/api/v1/tenants/{id}', '/.well-known/jwks.json']));
    expect((await t.request({ method: 'GET', url: '/api/docs/' })).status).toBe(200);
    for (const url of ['/.well-known/openid-configuration', '/api/.well-known/openid-configuration']) {
      const discovery = await t.request({ method: 'GET', url });
      expect(discovery.body).toMatchObject({
        issuer: 'http://iam.test',
        authorization_endpoint: 'http://iam.test/api/oauth/authorize',
        token_endpoint: 'http://iam.test/api/auth/token',
        userinfo_endpoint: 'http://iam.test/api/auth/validate',
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256', 'HS256'],
        scopes_supported: ['openid', 'profile', 'email', 'offline_access', ...PERMISSIONS, 'scim'],
      });
    }
    const jwks = await t.request({ method: 'GET', url: '/.well-known/jwks.json' });
    expect(jwks.headers['cache-control']).toBe('public, max-age=3600');
    expect(jwks.body.keys).toEqual([{ kty: 'RSA', use: 'sig', kid: expect.any(String), alg: 'RS256', n: expect.any(String), e: 'AQAB' }]);
    expect((await t.request({ method: 'GET', url: '/api/.well-known/jwks.json' })).body).toEqual(jwks.body);
  });

  it('readiness is 503 when projections are not running', async () => {
    await t.service.runner.stop();
    const ready = await t.request({ method: 'GET', url: '/health/ready' });
    expect(ready.status).toBe(503);
    await t.service.runner.start();
  });
});
