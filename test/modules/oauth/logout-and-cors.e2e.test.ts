import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { discover, freshChecks, signIn, startOidcService, TENANT, type OidcService } from './oidc-fixture.ts';

describe('RP-initiated logout and CORS per application', () => {
  let s: OidcService;
  const REDIRECT = 'https://portal.example/callback';
  const AFTER_LOGOUT = 'https://portal.example/bye';
  const ORIGIN = 'https://portal.example';

  beforeAll(async () => {
    s = await startOidcService();
  });
  afterAll(() => s.close());

  it('openid-client ends the session with its ID token and returns to a registered address only', async () => {
    const app = await s.createApplication({ name: 'portal', type: 'web', redirectUris: [REDIRECT], postLogoutRedirectUris: [AFTER_LOGOUT] });
    const config = await discover(s.issuer, app.clientId, app.clientSecret!);
    expect(config.serverMetadata().end_session_endpoint).toBe(`${s.issuer}/api/oauth/logout`);
    const checks = await freshChecks();
    const url = client.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope: 'openid', state: checks.expectedState, code_challenge: checks.codeChallenge, code_challenge_method: 'S256' });
    const tokens = await client.authorizationCodeGrant(config, new URL((await signIn(url)).headers.get('location')!), { pkceCodeVerifier: checks.pkceCodeVerifier, expectedState: checks.expectedState });

    const elsewhere = await fetch(client.buildEndSessionUrl(config, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: 'https://evil.example/' }), { redirect: 'manual' });
    expect([elsewhere.status, elsewhere.headers.get('location')]).toEqual([400, null]);
    // The client's tenant presented as another one (x-tenant): 401, nothing ends.
    const foreign = await fetch(client.buildEndSessionUrl(config, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: AFTER_LOGOUT }), { redirect: 'manual', headers: { 'x-tenant': 'other' } });
    expect([foreign.status, foreign.headers.get('location')]).toEqual([401, null]);
    // Refused before anything ended: the session still refreshes.
    const still = await client.refreshTokenGrant(config, tokens.refresh_token!);

    const logout = await fetch(client.buildEndSessionUrl(config, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: AFTER_LOGOUT, state: 'bye-1' }), { redirect: 'manual' });
    expect([logout.status, logout.headers.get('location')]).toEqual([302, `${AFTER_LOGOUT}?state=bye-1`]);
    await expect(client.refreshTokenGrant(config, still.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    const forged = await fetch(`${s.issuer}/api/oauth/logout?id_token_hint=${tokens.id_token!.slice(0, -4)}AAAA`);
    expect(forged.status).toBe(400);
  });

  it('answers CORS only for origins registered by an application, with credentials, never *', async () => {
    await s.createApplication({ name: 'spa', type: 'spa', redirectUris: [REDIRECT], allowedOrigins: [ORIGIN] });
    const preflight = (origin: string) =>
      s.t.request({ method: 'OPTIONS', url: '/api/auth/token', headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, x-tenant' } });
    const allowed = await preflight(ORIGIN);
    expect(allowed.status).toBe(204);
    expect(allowed.headers).toMatchObject({
      'access-control-allow-origin': ORIGIN,
      'access-control-allow-credentials': 'true',
      'access-control-allow-headers': 'content-type, x-tenant',
    });
    const other = await preflight('https://evil.example');
    expect(other.status).toBe(204);
    expect(other.headers).not.toHaveProperty('access-control-allow-origin');

    const discovery = await s.t.request({ method: 'GET', url: '/.well-known/openid-configuration', headers: { origin: ORIGIN } });
    expect(discovery.headers['access-control-allow-origin']).toBe(ORIGIN);
    const inTenant = await s.t.request({ method: 'GET', url: '/api/users', tenant: TENANT, token: await s.admin(), headers: { origin: ORIGIN } });
    expect(inTenant.headers['access-control-allow-origin']).toBe(ORIGIN);
    // The origin is acme's: another tenant's answers do not share it.
    const otherTenant = await s.t.request({ method: 'GET', url: '/api/users', tenant: 'other', token: await s.t.token({ sub: 'x', tenant: 'other', roles: ['admin'] }), headers: { origin: ORIGIN } });
    expect(otherTenant.headers).not.toHaveProperty('access-control-allow-origin');
    const evil = await s.t.request({ method: 'GET', url: '/api/users', tenant: TENANT, token: await s.admin(), headers: { origin: 'https://evil.example' } });
    expect(evil.headers).not.toHaveProperty('access-control-allow-origin');
  });

  it('never answers CORS at the authorization endpoint or the other pages (RFC 9700 2.6), even to a registered origin', async () => {
    const spa = await s.createApplication({ name: 'spa-pages', type: 'spa', redirectUris: [REDIRECT], allowedOrigins: [ORIGIN] });
    const { codeChallenge } = await freshChecks();
    const authorize = { response_type: 'code', client_id: spa.clientId, redirect_uri: REDIRECT, scope: 'openid', code_challenge: codeChallenge, code_challenge_method: 'S256' };
    const pages: Array<[string, string, number]> = [
      ['GET', `/api/oauth/authorize?${new URLSearchParams({ ...authorize, state: 'st' })}`, 200],
      // An error redirected to the client (no state) is the authorization endpoint's answer too.
      ['GET', `/api/oauth/authorize?${new URLSearchParams(authorize)}`, 302],
      ['POST', '/api/oauth/authenticate', 400],
      ['GET', '/api/oauth/device', 200],
      ['GET', '/api/oauth/logout', 200],
    ];
    for (const [method, url, status] of pages) {
      const answer = await s.t.request({ method, url, headers: { origin: ORIGIN, ...(method === 'POST' ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) }, ...(method === 'POST' ? { body: 'request_id=x' } : {}) });
      expect(answer.status, url).toBe(status);
      expect(answer.headers, url).not.toHaveProperty('access-control-allow-origin');
      expect(answer.headers, url).not.toHaveProperty('access-control-allow-credentials');
    }
    // The same origin is answered where scripts do call: the token endpoint.
    const token = await s.t.request({ method: 'POST', url: '/api/auth/token', headers: { origin: ORIGIN, 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=refresh_token&refresh_token=x' });
    expect(token.headers['access-control-allow-origin']).toBe(ORIGIN);
  });
});
