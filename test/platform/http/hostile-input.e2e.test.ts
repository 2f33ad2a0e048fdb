import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLATFORM, startTestService, type TestService } from '../../support/service.ts';

/**
 * What every route must survive (issue 21, "Bad input"): each answer is a 4xx in the route's error
 * envelope, never a 500, and nothing it sent is stored in a way that breaks a later read.
 */
describe('hostile input', () => {
  let t: TestService;
  let admin: string;

  beforeAll(async () => {
    t = await startTestService();
    admin = await t.token({ sub: 'admin', tenant: PLATFORM, roles: ['admin'] });
  });
  afterAll(async () => t?.close());

  /** String bodies go out as they are, declared JSON unless the headers say otherwise. */
  const send = (method: string, url: string, body?: unknown, headers: Record<string, string> = {}) =>
    t.request({
      method,
      url,
      tenant: PLATFORM,
      token: admin,
      ...(body !== undefined ? { body } : {}),
      headers: typeof body === 'string' ? { 'content-type': 'application/json', ...headers } : headers,
    });

  /** Raw JSON text: what JSON.stringify cannot produce (lone surrogates stay escapes, duplicate keys). */
  const raw = (text: string) => text;

  const bodies: [string, string][] = [
    ['NUL in a string', raw('{"email":"nul\\u0000@p.test","firstName":"a"}')],
    ['a lone high surrogate', raw('{"email":"s@p.test","firstName":"\\ud800"}')],
    ['a lone low surrogate in a key', raw('{"email":"s@p.test","\\udc00":"x"}')],
    ['__proto__', raw('{"email":"p@p.test","__proto__":{"admin":true}}')],
    ['constructor.prototype', raw('{"email":"c@p.test","constructor":{"prototype":{"admin":true}}}')],
    ['nested 20,000 deep', `{"email":"d@p.test","firstName":${'['.repeat(20_000)}${']'.repeat(20_000)}}`],
    ['a 100,000-character string', JSON.stringify({ email: 'long@p.test', firstName: 'x'.repeat(100_000) })],
    ['a number past 2^53', raw('{"email":"n@p.test","firstName":"a","enabled":9007199254740993}')],
    ['1e308 squared', raw('{"email":"n@p.test","enabled":1e999}')],
    ['wrong types', raw('{"email":["a@p.test"],"firstName":{"x":1}}')],
    ['not JSON', raw('{"email":')],
  ];

  it.each(bodies)('POST /api/users with %s: 400 in the canonical envelope', async (_label, body) => {
    const response = await send('POST', '/api/users', body);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ ok: false, error: { code: 'VALIDATION_ERROR' } });
  });

  it('refuses NUL and lone surrogates in query values and path segments, and overlong or malformed paths', async () => {
    expect((await send('GET', '/api/users?search=%00')).status).toBe(400);
    // Invalid UTF-8 (an encoded surrogate, an overlong '/') decodes to replacement characters: harmless text.
    for (const invalid of ['%ED%A0%80', '%C0%AF']) {
      const search = await send('GET', `/api/users?search=${invalid}`);
      expect(search.status).toBe(200);
      expect(search.body.data.data).toEqual([]);
    }
    expect((await send('GET', '/api/users/%00')).status).toBe(400);
    const overlong = await send('GET', `/api/users/${'0'.repeat(200)}`);
    expect(overlong.status).toBe(400);
    expect(overlong.body).toMatchObject({ ok: false, error: { code: 'VALIDATION_ERROR' } });
    // In the envelope of the route's family, as the fuzzer checks: {success: false} here.
    const revoke = await send('DELETE', `/api/admin/sessions/${'0'.repeat(200)}`);
    expect(revoke.status).toBe(400);
    expect(revoke.body).toMatchObject({ success: false, error: { code: 'VALIDATION_ERROR' } });
    const malformed = await send('GET', '/api/users/%zz');
    expect(malformed.status).toBe(400);
    expect(malformed.body).toMatchObject({ ok: false, error: { code: 'VALIDATION_ERROR' } });
  });

  it('keeps the v1 envelope for the same refusals', async () => {
    const response = await send('POST', '/api/v1/users', raw('{"email":"nul\\u0000@p.test"}'));
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ ok: false, error: { code: 'VALIDATION_ERROR', details: expect.any(Array) } });
  });

  it('an empty body declared JSON is no body on a route that takes none, and still refused where a body is required', async () => {
    const deleted = await send('DELETE', '/api/webhooks/00000000-0000-7000-8000-000000000000', '');
    expect(deleted.status).toBe(404);
    expect(deleted.body.error.code).toBe('NOT_FOUND');
    const created = await send('POST', '/api/users', '');
    expect(created.status).toBe(400);
    expect(created.body.error).toMatchObject({ code: 'VALIDATION_ERROR', message: 'Empty JSON body' });
  });

  it('a JSON body sent as text/plain is 415, and the service still reads and writes afterwards', async () => {
    const response = await send('POST', '/api/users', '{"email":"plain@p.test"}', { 'content-type': 'text/plain' });
    expect(response.status).toBe(415);
    const created = await send('POST', '/api/users', { email: 'after@p.test', firstName: 'Zoë 𝄞' });
    expect(created.status).toBe(201);
    const read = await send('GET', `/api/users/${created.body.data.id}`);
    expect(read.body.data.firstName).toBe('Zoë 𝄞');
    expect((await send('GET', '/api/users?search=after')).body.data.data).toHaveLength(1);
  });
});
