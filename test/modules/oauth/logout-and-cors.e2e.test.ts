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
});
