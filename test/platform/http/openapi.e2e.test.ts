import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { PLATFORM, startTestService, type TestService } from '../../support/service.ts';

type Schema = Record<string, unknown>;
interface Response {
  $ref?: string;
  description?: string;
  content?: Record<string, { schema?: Schema }>;
}
interface Operation {
  description?: string;
  security?: unknown[];
  parameters?: unknown[];
  requestBody?: unknown;
  responses: Record<string, Response>;
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas?: Record<string, Schema>; responses: Record<string, Response> };
}

const METHODS = ['get', 'post', 'put', 'delete', 'patch'];
/** The spec answers GET /api/admin/sessions/{id} with 405 only: its one operation without a success. */
const ONLY_ERRORS = new Set(['get /api/admin/sessions/{id}']);
/** /api routes that need no x-tenant (decisions.md): discovery, this document, the sign-in, logout and device pages (the sealed request, ID token, client_id or user code names the tenant). */
const TENANTLESS = ['/api/.well-known/', '/api/openapi.json', '/api/asyncapi.json', '/api/oauth/authenticate', '/api/oauth/logout', '/api/oauth/device'];
/** Readiness answers 503 with its checks, not an error. */
const NOT_ERRORS = new Set(['get /health/ready 503']);

const MODEL = `model
  schema 1.1
type user
type group
  relations
    define member: [user, group#member]
type doc
  relations
    define owner: [user]
    define blocked: [user]
    define viewer: [user, group#member] or owner
    define can_read: viewer but not blocked`;

/** The documented body schema of one answer, as zod, with the document's components as $defs. */
function documentedSchema(document: Document, path: string, method: string, status: number) {
  const response = document.paths[path]?.[method]?.responses[String(status)];
  const schema = response?.content?.['application/json']?.schema;
  if (!schema) throw new Error(`${method} ${path} documents no ${status} body`);
  const withDefs = JSON.parse(JSON.stringify({ ...schema, $defs: document.components.schemas ?? {} }).replaceAll('#/components/schemas/', '#/$defs/'));
  return z.fromJSONSchema(withDefs);
}

describe('the OpenAPI document', () => {
  let t: TestService;
  let document: Document;
  let admin: string;
  const operations = () =>
    Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([method]) => METHODS.includes(method))
        .map(([method, operation]) => ({ key: `${method} ${path}`, path, method, operation })),
    );

  beforeAll(async () => {
    t = await startTestService();
    document = (await t.request({ method: 'GET', url: '/api/openapi.json' })).body;
    admin = await t.token({ sub: 'admin', tenant: PLATFORM, roles: ['admin'] });
  });
  afterAll(() => t.close());

  it('documents, for every operation, its success and every error status it can answer, each with a body schema', () => {
    expect(operations().length).toBeGreaterThan(60);
    for (const { key, path, operation } of operations()) {
      const statuses = Object.keys(operation.responses).map(Number);
      const expected = [500];
      // A success may be a redirect (the sign-in form answers 302).
      if (!ONLY_ERRORS.has(key)) expect([key, statuses.some((status) => status >= 200 && status < 400)]).toEqual([key, true]);
      if (operation.security) expected.push(401);
      if (operation.security && !operation.description?.includes('bearer access token')) expected.push(403);
      if (operation.parameters?.length || operation.requestBody) expected.push(400);
      if (operation.requestBody) expected.push(413, 415);
      if (path.startsWith('/api/') && !TENANTLESS.some((prefix) => path.startsWith(prefix))) expected.push(400, 404); // x-tenant missing or unknown
      expect([key, expected.filter((status) => !statuses.includes(status))]).toEqual([key, []]);
      for (const [status, response] of Object.entries(operation.responses)) {
        const resolved = response.$ref ? document.components.responses[response.$ref.split('/').pop()!]! : response;
        const [mediaType, content] = Object.entries(resolved.content ?? {})[0] ?? [];
        const schema = content?.schema; // JSON, or the route's own media type (metrics, HTML pages)
        expect([key, status, typeof schema]).toEqual([key, status, 'object']);
        // Error bodies of the JSON families; an HTML page states its problem in the page.
        if (Number(status) >= 400 && mediaType === 'application/json' && !NOT_ERRORS.has(`${key} ${status}`)) {
          // An error body of some family (a shared answer such as 429 lists each family's).
          for (const body of (schema as { anyOf?: Schema[] }).anyOf ?? [schema as Schema]) {
            expect([key, status, Object.keys(body.properties as object)]).toEqual([key, status, expect.arrayContaining(['error'])]);
          }
        }
        expect([key, status, resolved.description]).toEqual([key, status, expect.any(String)]);
      }
    }
  });

  it('names the codes of each error status, from the route declaration and the error table', () => {
    const getUser = document.paths['/api/users/{id}']!.get!.responses;
    expect(getUser['404']!.description).toBe('404: NOT_FOUND, TENANT_NOT_FOUND');
    expect(getUser['403']!.description).toBe('403: PERMISSION_DENIED');
    const token = document.paths['/api/auth/token']!.post!.responses;
    expect(token['400']!.content!['application/json']!.schema!.properties).toHaveProperty('error_description');
    const revoke = document.paths['/api/admin/sessions/{id}']!.delete!.responses;
    expect(revoke['404']!.content!['application/json']!.schema!.properties).toHaveProperty('success');
    expect(document.paths['/api/auth/reset-password']!.post!.responses['400']!.description).toContain('TOKEN_INVALID');
  });

  it('describes what the routes actually answer, successes and errors, for a sample of routes', async () => {
    const samples: { method: string; url: string; path: string; token?: string | null; tenant?: string | null; body?: unknown; status: number }[] = [];
    const answer = async (sample: (typeof samples)[number]) => {
      const response = await t.request({
        method: sample.method,
        url: sample.url,
        body: sample.body,
        ...(sample.token !== null ? { token: sample.token ?? admin } : {}),
        ...(sample.tenant !== null ? { tenant: sample.tenant ?? PLATFORM } : {}),
      });
      expect([sample.method, sample.url, response.status]).toEqual([sample.method, sample.url, sample.status]);
      const parsed = documentedSchema(document, sample.path, sample.method.toLowerCase(), sample.status).safeParse(response.body);
      expect([sample.method, sample.url, parsed.error?.issues ?? 'matches']).toEqual([sample.method, sample.url, 'matches']);
      return response.body;
    };
    const unknownId = '0190f0f0-0000-7000-8000-000000000000';
    const user = await answer({ method: 'POST', url: '/api/users', path: '/api/users', body: { email: 'doc@p.test', username: 'doc' }, status: 201 });
    const id = user.data.id as string;
    const signup = await answer({ method: 'POST', url: '/api/auth/signup', path: '/api/auth/signup', token: null, body: { email: 's@p.test', password: 'Signup-Passw0rd' }, status: 201 });
    const model = await answer({
      method: 'POST', url: '/api/fga/models', path: '/api/fga/models', status: 201,
      body: { name: 'm', dsl: MODEL },
    });
    samples.push(
      { method: 'GET', url: `/api/users/${id}`, path: '/api/users/{id}', status: 200 },
      { method: 'GET', url: `/api/users/${unknownId}`, path: '/api/users/{id}', status: 404 },
      { method: 'GET', url: `/api/v1/users/${unknownId}`, path: '/api/v1/users/{id}', status: 404 },
      { method: 'GET', url: '/api/users?limit=5', path: '/api/users', status: 200 },
      { method: 'GET', url: '/api/v1/users?pageSize=5', path: '/api/v1/users', status: 200 },
      { method: 'PUT', url: `/api/users/${id}`, path: '/api/users/{id}', body: { lastName: 'Doc' }, status: 200 },
      { method: 'POST', url: '/api/users', path: '/api/users', body: { email: 'not-an-email' }, status: 400 },
      { method: 'POST', url: '/api/users', path: '/api/users', body: { email: 'DOC@p.test' }, status: 409 },
      { method: 'GET', url: '/api/users', path: '/api/users', token: null, status: 401 },
      { method: 'GET', url: '/api/users', path: '/api/users', tenant: null, status: 400 },
      { method: 'GET', url: `/api/users/${id}/roles`, path: '/api/users/{id}/roles', status: 200 },
      { method: 'POST', url: `/api/users/${id}/unlock`, path: '/api/users/{id}/unlock', status: 200 },
      { method: 'GET', url: '/api/roles', path: '/api/roles', status: 200 },
      { method: 'GET', url: '/api/v1/roles', path: '/api/v1/roles', status: 200 },
      { method: 'GET', url: '/api/tenants', path: '/api/tenants', status: 200 },
      { method: 'GET', url: `/api/tenants/${PLATFORM}`, path: '/api/tenants/{id}', status: 200 },
      { method: 'GET', url: '/api/admin/sessions', path: '/api/admin/sessions', status: 200 },
      { method: 'GET', url: `/api/admin/sessions/${unknownId}`, path: '/api/admin/sessions/{id}', status: 405 },
      { method: 'DELETE', url: `/api/admin/sessions/${unknownId}`, path: '/api/admin/sessions/{id}', status: 404 },
      { method: 'GET', url: '/api/user/security/sessions', path: '/api/user/security/sessions', token: signup.data.accessToken, status: 200 },
      { method: 'GET', url: '/api/auth/validate', path: '/api/auth/validate', token: signup.data.accessToken, status: 200 },
      { method: 'POST', url: '/api/auth/login', path: '/api/auth/login', token: null, body: { email: 's@p.test', password: 'wrong' }, status: 401 },
      { method: 'POST', url: '/api/auth/login', path: '/api/auth/login', token: null, body: { email: 's@p.test', password: 'Signup-Passw0rd' }, status: 200 },
      { method: 'POST', url: '/api/auth/token', path: '/api/auth/token', token: null, body: { grant_type: 'refresh_token', refresh_token: signup.data.refreshToken }, status: 200 },
      { method: 'POST', url: '/api/auth/token', path: '/api/auth/token', token: null, body: {}, status: 400 },
      { method: 'POST', url: '/api/auth/reset-password', path: '/api/auth/reset-password', token: null, body: { token: 'x.y', newPassword: 'Another-Passw0rd' }, status: 400 },
      { method: 'GET', url: '/api/realm-settings', path: '/api/realm-settings', status: 200 },
      { method: 'PUT', url: '/api/realm-settings', path: '/api/realm-settings', body: { section: 'login', data: { maxConcurrentSessions: 10 } }, status: 200 },
      { method: 'PUT', url: '/api/realm-settings', path: '/api/realm-settings', body: { section: 'tokens', data: { accessTokenExpiry: 1 } }, status: 400 },
      { method: 'GET', url: '/api/fga/models', path: '/api/fga/models', status: 200 },
      { method: 'GET', url: `/api/fga/models/${model.data.id}`, path: '/api/fga/models/{id}', status: 200 },
      { method: 'POST', url: `/api/fga/models/${model.data.id}/activate`, path: '/api/fga/models/{id}/activate', status: 200 },
      { method: 'POST', url: '/api/fga/tuples', path: '/api/fga/tuples', body: { objectType: 'doc', objectId: 'd1', relation: 'viewer', subjectType: 'group', subjectId: 'g', subjectRelation: 'member' }, status: 201 },
      { method: 'POST', url: '/api/fga/tuples/bulk', path: '/api/fga/tuples/bulk', body: { writes: [{ objectType: 'group', objectId: 'g', relation: 'member', subjectType: 'user', subjectId: 'ann' }] }, status: 200 },
      { method: 'GET', url: '/api/fga/tuples', path: '/api/fga/tuples', status: 200 },
      { method: 'POST', url: '/api/fga/check', path: '/api/fga/check', body: { objectType: 'doc', objectId: 'd1', relation: 'viewer', subjectType: 'user', subjectId: 'ann', explain: true }, status: 200 },
      { method: 'POST', url: '/api/fga/expand', path: '/api/fga/expand', body: { objectType: 'doc', objectId: 'd1', relation: 'viewer' }, status: 200 },
      { method: 'POST', url: '/api/fga/list-objects', path: '/api/fga/list-objects', body: { objectType: 'doc', relation: 'viewer', subjectType: 'user', subjectId: 'ann' }, status: 200 },
      { method: 'POST', url: '/api/fga/check', path: '/api/fga/check', body: { objectType: 'nope', objectId: 'd1', relation: 'viewer', subjectType: 'user', subjectId: 'ann' }, status: 400 },
      { method: 'DELETE', url: `/api/users/${id}`, path: '/api/users/{id}', status: 200 },
      { method: 'GET', url: '/.well-known/jwks.json', path: '/.well-known/jwks.json', token: null, tenant: null, status: 200 },
      { method: 'GET', url: '/.well-known/openid-configuration', path: '/.well-known/openid-configuration', token: null, tenant: null, status: 200 },
      { method: 'GET', url: '/health/ready', path: '/health/ready', token: null, tenant: null, status: 200 },
    );
    for (const sample of samples) await answer(sample);
    const forbidden = await t.token({ sub: 'u', tenant: PLATFORM, roles: ['user'] });
    await answer({ method: 'GET', url: '/api/fga/models', path: '/api/fga/models', token: forbidden, status: 403 });
  });
});
