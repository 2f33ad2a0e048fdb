import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/platform/clock.ts';
import { PLATFORM, startTestService, type TestService } from '../../support/service.ts';

const LIMITS = {
  RATE_LIMIT_ENABLED: 'true',
  RATE_LIMIT_AUTH_MAX: '3',
  RATE_LIMIT_AUTH_WINDOW_S: '60',
  RATE_LIMIT_API_MAX: '5',
  RATE_LIMIT_API_WINDOW_S: '60',
  RATE_LIMIT_PUBLIC_MAX: '4',
  RATE_LIMIT_PUBLIC_WINDOW_S: '60',
};
const header = (response: { headers: Record<string, unknown> }, name: string) => response.headers[name] as string | undefined;
const limitHeaders = (response: { headers: Record<string, unknown> }) =>
  ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'].map((name) => header(response, name));

describe('rate limiting', () => {
  let t: TestService;
  const clock = new ManualClock();
  // When every hit so far has left the sliding window: the end of the window after the current one.
  const windowReset = () => String(Math.floor(clock.now().getTime() / 60_000) * 60 + 120);
  const loginEvents = async () =>
    (await t.db.pool.query<{ n: number }>("select count(*)::int as n from events where stream_id like 'login%'")).rows[0]!.n;

  beforeAll(async () => {
    t = await startTestService({ clock, env: LIMITS });
  });
  afterAll(() => t.close());

  it('counts an authenticated caller per user: headers on every response, remaining going down', async () => {
    const token = await t.token({ sub: 'counted-user', tenant: PLATFORM, roles: ['admin'] });
    const statuses = [];
    for (const remaining of ['4', '3', '2']) {
      // A different address each time: the user is the key, not the address.
      const response = await t.request({ method: 'GET', url: '/api/users', tenant: PLATFORM, token, remoteAddress: `198.51.100.${remaining}` });
      statuses.push(response.status);
      expect(limitHeaders(response)).toEqual(['5', remaining, windowReset()]);
    }
    expect(statuses).toEqual([200, 200, 200]);
  });

  it('puts the headers on error responses too, and counts a caller without a valid token by address', async () => {
    const remoteAddress = '198.51.100.20';
    const denied = await t.request({ method: 'GET', url: '/api/users', tenant: PLATFORM, token: 'not-a-token', remoteAddress });
    expect(denied.status).toBe(401);
    expect(limitHeaders(denied)).toEqual(['5', '4', windowReset()]);
    const missingTenant = await t.request({ method: 'GET', url: '/api/users', remoteAddress });
    expect([missingTenant.status, header(missingTenant, 'x-ratelimit-remaining')]).toEqual([400, '3']);
  });

  it('answers 429 RATE_LIMITED with Retry-After after the limit, and admits again as the window slides', async () => {
    const remoteAddress = '198.51.100.30';
    const jwks = () => t.request({ method: 'GET', url: '/.well-known/jwks.json', remoteAddress });
    for (let i = 0; i < 4; i++) expect((await jwks()).status).toBe(200);
    const limited = await jwks();
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ ok: false, error: { code: 'RATE_LIMITED', message: expect.any(String) } });
    expect(limitHeaders(limited)).toEqual(['4', '0', windowReset()]);
    // 5 hits, limit 4: the next fits when 5 * (1 - f) <= 3 in the next window, f = 0.4: 60 s + 24 s.
    // (A fixed window would have admitted again after 60 s.)
    expect(header(limited, 'retry-after')).toBe('84');
    clock.advance(84_000);
    const again = await jwks();
    expect([again.status, header(again, 'x-ratelimit-remaining')]).toEqual([200, '0']);
  });

  it('limits logins per account across addresses, before any password is checked', async () => {
    const attempt = (n: number, email = 'Victim@Example.test') =>
      t.request({ method: 'POST', url: '/api/auth/login', tenant: PLATFORM, body: { email, password: 'wrong password' }, remoteAddress: `203.0.113.${n}` });
    for (const n of [1, 2, 3]) expect((await attempt(n)).status).toBe(401);
    const eventsBefore = await loginEvents();

    const limited = await attempt(4, 'victim@example.TEST');
    expect([limited.status, limited.body.error.code]).toEqual([429, 'RATE_LIMITED']);
    // The fresh address has 2 left; the account has none: the strictest is reported.
    expect(header(limited, 'x-ratelimit-remaining')).toBe('0');
    expect(await loginEvents()).toBe(eventsBefore);

    // Another account from that address is still admitted.
    expect((await attempt(4, 'someone-else@example.test')).status).toBe(401);
  });

  it('answers the OAuth token endpoint in its own error envelope', async () => {
    const token = () => t.request({ method: 'POST', url: '/api/auth/token', tenant: PLATFORM, body: { grant_type: 'refresh_token', refresh_token: 'x' }, remoteAddress: '203.0.113.50' });
    for (let i = 0; i < 3; i++) expect((await token()).status).toBe(400);
    const limited = await token();
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ error: 'invalid_request', error_description: expect.any(String) });
    expect(header(limited, 'retry-after')).toBeDefined();
  });

  it('ignores X-Forwarded-For from a client that is not a trusted proxy', async () => {
    const results = [];
    for (let i = 0; i < 5; i++) {
      const response = await t.request({ method: 'GET', url: '/.well-known/openid-configuration', remoteAddress: '192.0.2.77', headers: { 'x-forwarded-for': `10.9.9.${i}` } });
      results.push(response.status);
    }
    expect(results).toEqual([200, 200, 200, 200, 429]);
    // A proxy on a private network names the client.
    const proxied = await t.request({ method: 'GET', url: '/.well-known/openid-configuration', remoteAddress: '10.0.0.2', headers: { 'x-forwarded-for': '192.0.2.78' } });
    expect([proxied.status, header(proxied, 'x-ratelimit-remaining')]).toEqual([200, '3']);
  });

  it('does not limit health, metrics and the API documents', async () => {
    for (const url of ['/health/live', '/metrics', '/api/openapi.json']) {
      const response = await t.request({ method: 'GET', url, remoteAddress: '192.0.2.99' });
      expect([url, response.status, header(response, 'x-ratelimit-limit')]).toEqual([url, 200, undefined]);
    }
  });

  it('documents the headers and the 429 response in the OpenAPI document', async () => {
    const document = (await t.request({ method: 'GET', url: '/api/openapi.json' })).body;
    expect(document.paths['/api/users'].get.responses['429']).toEqual({ $ref: '#/components/responses/TooManyRequests' });
    expect(Object.keys(document.paths['/api/users'].get.responses['200'].headers)).toEqual(['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']);
    expect(Object.keys(document.components.responses.TooManyRequests.headers)).toContain('Retry-After');
    expect(document.paths['/health/live'].get.responses['429']).toBeUndefined();
  });
});

describe('rate limiting with RATE_LIMIT_STORE=postgres', () => {
  let one: TestService;
  let two: TestService;
  beforeAll(async () => {
    const clock = new ManualClock();
    const env = { ...LIMITS, RATE_LIMIT_STORE: 'postgres' };
    one = await startTestService({ clock, env });
    two = await startTestService({ clock, env, db: one.db });
  });
  afterAll(async () => {
    await two.close();
    await one.close();
  });

  it('shares the counts between two service instances on one database', async () => {
    const remoteAddress = '192.0.2.10';
    const jwks = (instance: TestService) => instance.request({ method: 'GET', url: '/.well-known/jwks.json', remoteAddress });
    const remaining = [];
    for (const instance of [one, two, one, two]) remaining.push(header(await jwks(instance), 'x-ratelimit-remaining'));
    expect(remaining).toEqual(['3', '2', '1', '0']);
    expect((await jwks(one)).status).toBe(429);
    expect((await jwks(two)).status).toBe(429);
  });
});
