import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { atHash } from '../../../src/modules/oauth/id-tokens.ts';
import { PERMISSIONS } from '../../../src/modules/roles/index.ts';
import { claimsOf, codeFlow, discover, freshChecks, REDIRECT, signIn, startOidcService, TENANT, USER, type OidcService } from './oidc-fixture.ts';

/**
 * Every flow driven by openid-client (panva's certified relying-party library), unmodified:
 * configured from discovery alone, no custom header (the client_id names the tenant), against the
 * service listening on a real port; the sign-in page is driven like a browser without JavaScript.
 */
describe('a standard OIDC client (openid-client) against the service', () => {
  let s: OidcService;

  beforeAll(async () => {
    s = await startOidcService();
  });
  afterAll(() => s.close());

  it('discovery lists exactly what works: every member, endpoint and scope', async () => {
    const metadata = (await (await fetch(`${s.issuer}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    const at = (path: string) => `${s.issuer}${path}`;
    expect(metadata).toEqual({
      issuer: s.issuer,
      authorization_endpoint: at('/api/oauth/authorize'),
      token_endpoint: at('/api/auth/token'),
      userinfo_endpoint: at('/api/auth/validate'),
      jwks_uri: at('/.well-known/jwks.json'),
      end_session_endpoint: at('/api/oauth/logout'),
      device_authorization_endpoint: at('/api/oauth/device_authorization'),
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: expect.any(Array),
      subject_types_supported: ['public'],
      // The spec's list, kept as it stands although ID tokens are RS256 only (docs/oauth.md, Left open).
      id_token_signing_alg_values_supported: ['RS256', 'HS256'],
      scopes_supported: ['openid', 'profile', 'email', 'offline_access', ...PERMISSIONS, 'scim'],
      // Each one is in the ID token or the userinfo answer (checked by the code flow below).
      claims_supported: expect.any(Array),
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      authorization_response_iss_parameter_supported: true,
      request_parameter_supported: false,
      request_uri_parameter_supported: false,
    });
    const grants = [...(metadata.grant_types_supported as string[])].sort();
    expect(grants).toEqual(Object.keys(s.t.service.grants).sort());
    expect(grants).toEqual(['authorization_code', 'client_credentials', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code', 'urn:ietf:params:oauth:grant-type:token-exchange']);

    // Every endpoint listed is there: each answers its own refusal of an empty request, none a 404.
    const post = (url: string) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: '' });
    const refusals = await Promise.all([
      fetch(at('/api/oauth/authorize')).then((r) => r.status),
      post(at('/api/auth/token')).then(async (r) => [r.status, ((await r.json()) as { error: string }).error]),
      fetch(at('/api/auth/validate')).then((r) => r.status),
      post(at('/api/auth/validate')).then((r) => r.status),
      fetch(at('/.well-known/jwks.json')).then((r) => r.status),
      fetch(at('/api/oauth/logout')).then((r) => r.status),
      post(at('/api/oauth/device_authorization')).then(async (r) => [r.status, ((await r.json()) as { error: string }).error]),
    ]);
    expect(refusals).toEqual([400, [400, 'invalid_request'], 401, 401, 200, 200, [401, 'invalid_client']]);

    // Every scope listed is granted: OIDC scopes and permission names at the authorization endpoint, ...
    const web = await s.createApplication({ name: 'all-scopes', type: 'web', redirectUris: [REDIRECT] });
    const everyUserScope = (metadata.scopes_supported as string[]).filter((scope) => scope !== 'scim');
    const page = await fetch(client.buildAuthorizationUrl(await discover(s.issuer, web.clientId, web.clientSecret!), { redirect_uri: REDIRECT, scope: everyUserScope.join(' '), state: 'st' }), { redirect: 'manual' });
    expect(page.status).toBe(200);
    // ... permission names and scim to a machine client.
    const clientScopes = (metadata.scopes_supported as string[]).filter((scope) => !['openid', 'profile', 'email', 'offline_access'].includes(scope));
    const m2m = await s.createApplication({ name: 'all-client-scopes', type: 'm2m', scopes: clientScopes });
    const granted = await client.clientCredentialsGrant(await discover(s.issuer, m2m.clientId, m2m.clientSecret!), { scope: clientScopes.join(' ') });
    expect(granted.scope).toBe(clientScopes.join(' '));
  });

  it('authorization code + PKCE for a confidential client (client_secret_basic): ID token, userinfo, refresh rotation', async () => {
    const app = await s.createApplication({ name: 'portal', type: 'web', redirectUris: [REDIRECT] });
    expect(app.clientId.startsWith(`${TENANT}.`)).toBe(true);
    const config = await discover(s.issuer, app.clientId, app.clientSecret!);
    const { tokens, callback, checks } = await codeFlow(config);
    expect(callback.searchParams.get('iss')).toBe(s.issuer);
    expect(callback.searchParams.get('state')).toBe(checks.expectedState);

    const id = tokens.claims()!;
    expect(id).toMatchObject({ iss: s.issuer, aud: app.clientId, nonce: checks.expectedNonce, acr: 'aal1', amr: ['pwd'], email: USER.email, given_name: 'Jo' });
    expect(typeof id.auth_time).toBe('number');
    expect(id.at_hash).toBe(atHash(tokens.access_token));
    expect(tokens.scope).toBe('openid profile email offline_access');
    const access = claimsOf(tokens.access_token);
    expect(access).toMatchObject({ sub: id.sub, sid: id.sid, tid: TENANT, client_id: app.clientId, scope: 'openid profile email offline_access' });

    const info = await client.fetchUserInfo(config, tokens.access_token, id.sub);
    expect(info).toMatchObject({ sub: id.sub, email: USER.email, tenant: TENANT });
    // Discovery's claims are exactly those the ID token and userinfo carry (profile and email asked, the user has a name).
    expect(new Set([...Object.keys(id), ...Object.keys(info)])).toEqual(new Set(config.serverMetadata().claims_supported));
    // Userinfo answers POST as it answers GET (OIDC Core 5.3.1).
    const posted = await fetch(`${s.issuer}/api/auth/validate`, { method: 'POST', headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect([posted.status, await posted.json()]).toEqual([200, info]);

    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    expect(claimsOf(refreshed.access_token)).toMatchObject({ sid: id.sid, client_id: app.clientId, scope: 'openid profile email offline_access' });
    // A narrower scope on refresh is granted, a wider one refused.
    const narrowed = await client.refreshTokenGrant(config, refreshed.refresh_token!, { scope: 'openid' });
    expect(narrowed.scope).toBe('openid');
    await expect(client.refreshTokenGrant(config, narrowed.refresh_token!, { scope: 'openid manage:users' })).rejects.toMatchObject({ error: 'invalid_scope' });
    // The rotated-away token is spent: reusing it revokes the session.
    await expect(client.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    await expect(client.refreshTokenGrant(config, narrowed.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('a public client (spa, token_endpoint_auth_method none) with PKCE; its refresh token is its own', async () => {
    const spa = await s.createApplication({ name: 'spa', type: 'spa', redirectUris: [REDIRECT] });
    const config = await discover(s.issuer, spa.clientId, undefined, client.None());
    const { tokens } = await codeFlow(config, { scope: 'openid' });
    expect(tokens.claims()!.aud).toBe(spa.clientId);
    expect(tokens.claims()).not.toHaveProperty('email');
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    expect(refreshed.access_token).toBeTruthy();
    // Another client cannot use it.
    const web = await s.createApplication({ name: 'thief', type: 'web', redirectUris: [REDIRECT] });
    const thief = await discover(s.issuer, web.clientId, web.clientSecret!);
    await expect(client.refreshTokenGrant(thief, refreshed.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('a native app (public) signs in through a loopback redirect on the port it bound, any port (RFC 8252 7.3)', async () => {
    const native = await s.createApplication({ name: 'desktop', type: 'native', redirectUris: ['http://127.0.0.1/callback'] });
    const config = await discover(s.issuer, native.clientId, undefined, client.None());
    const checks = await freshChecks();
    const redirect = 'http://127.0.0.1:53123/callback';
    const url = client.buildAuthorizationUrl(config, { redirect_uri: redirect, scope: 'openid', state: checks.expectedState, nonce: checks.expectedNonce, code_challenge: checks.codeChallenge, code_challenge_method: 'S256' });
    const answer = await signIn(url);
    expect(answer.status).toBe(302);
    const callback = new URL(answer.headers.get('location')!);
    expect(`${callback.origin}${callback.pathname}`).toBe(redirect);
    const tokens = await client.authorizationCodeGrant(config, callback, checks);
    expect(tokens.claims()!.aud).toBe(native.clientId);
    // Only the port varies: another path is still unregistered (a page, no redirect).
    const elsewhere = await fetch(client.buildAuthorizationUrl(config, { redirect_uri: 'http://127.0.0.1:53123/callback/', scope: 'openid', state: 's', code_challenge: checks.codeChallenge, code_challenge_method: 'S256' }), { redirect: 'manual' });
    expect([elsewhere.status, elsewhere.headers.get('location')]).toEqual([400, null]);
  });

  it('client_credentials with client_secret_post: a token whose scope the admin routes honour', async () => {
    const m2m = await s.createApplication({ name: 'batch', type: 'm2m', scopes: ['manage:users'] });
    const config = await discover(s.issuer, m2m.clientId, m2m.clientSecret!, client.ClientSecretPost());
    const tokens = await client.clientCredentialsGrant(config, { scope: 'manage:users' });
    expect(tokens.scope).toBe('manage:users');
    expect(tokens.refresh_token).toBeUndefined();
    const users = await client.fetchProtectedResource(config, tokens.access_token, new URL(`${s.issuer}/api/users`), 'GET', undefined, new Headers({ 'x-tenant': TENANT }));
    expect(users.status).toBe(200);
    await expect(client.clientCredentialsGrant(config, { scope: 'admin:all' })).rejects.toMatchObject({ error: 'invalid_scope' });
  });

  it('token exchange (RFC 8693): delegation with act, an audience of the tenant, never a wider scope or another tenant', async () => {
    const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
    const ACCESS = 'urn:ietf:params:oauth:token-type:access_token';
    const app = await s.createApplication({ name: 'gateway', type: 'web', redirectUris: [REDIRECT], grantTypes: ['authorization_code', TOKEN_EXCHANGE] });
    const api = await s.createApplication({ name: 'api', type: 'm2m' });
    const config = await discover(s.issuer, app.clientId, app.clientSecret!);
    const login = await s.t.request({ method: 'POST', url: '/api/auth/login', tenant: TENANT, body: { email: USER.email, password: USER.password } });
    const subject = login.body.data.accessToken as string;
    const actor = await s.t.token({ sub: 'service-account', tenant: TENANT, roles: ['user'] });

    const exchanged = await client.genericGrantRequest(config, TOKEN_EXCHANGE, {
      subject_token: subject,
      subject_token_type: ACCESS,
      actor_token: actor,
      actor_token_type: ACCESS,
      audience: api.clientId,
      scope: 'manage:users',
    });
    expect(exchanged).toMatchObject({ issued_token_type: ACCESS, token_type: 'bearer', scope: 'manage:users' });
    const claims = claimsOf(exchanged.access_token);
    expect(claims).toMatchObject({ sub: claimsOf(subject).sub, tid: TENANT, act: { sub: 'service-account' }, aud: [TENANT, api.clientId], scope: 'manage:users' });
    expect((await s.t.request({ method: 'GET', url: '/api/users', tenant: TENANT, token: exchanged.access_token })).status).toBe(200);
    expect((await s.t.request({ method: 'GET', url: '/api/roles', tenant: TENANT, token: exchanged.access_token })).status).toBe(403);

    // The exchanged token as subject: its scope bounds every further exchange.
    const wider = client.genericGrantRequest(config, TOKEN_EXCHANGE, { subject_token: exchanged.access_token, subject_token_type: ACCESS, scope: 'manage:users admin:all' });
    await expect(wider).rejects.toMatchObject({ error: 'invalid_scope' });
    const foreign = await s.t.token({ sub: 'someone', tenant: 'other', roles: ['admin'] });
    await expect(client.genericGrantRequest(config, TOKEN_EXCHANGE, { subject_token: foreign, subject_token_type: ACCESS })).rejects.toMatchObject({ error: 'invalid_grant' });
    await expect(client.genericGrantRequest(config, TOKEN_EXCHANGE, { subject_token: subject, subject_token_type: ACCESS, audience: 'other.00000000-0000-4000-8000-000000000000' })).rejects.toMatchObject({
      error: 'invalid_target',
    });
    const portal = await s.createApplication({ name: 'plain', type: 'web', redirectUris: [REDIRECT] });
    const plain = await discover(s.issuer, portal.clientId, portal.clientSecret!);
    await expect(client.genericGrantRequest(plain, TOKEN_EXCHANGE, { subject_token: subject, subject_token_type: ACCESS })).rejects.toMatchObject({ error: 'unauthorized_client' });
  });
  it('token exchange of a subject token without scope: the scope is the requested scope intersected with the subject\'s permissions (decisions.md)', async () => {
    const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
    const ACCESS = 'urn:ietf:params:oauth:token-type:access_token';
    const app = await s.createApplication({ name: 'gateway-2', type: 'web', redirectUris: [REDIRECT], grantTypes: ['authorization_code', TOKEN_EXCHANGE] });
    const config = await discover(s.issuer, app.clientId, app.clientSecret!);
    const plainUser = { email: 'plain@acme.test', password: 'Plain-Us3r!' };
    expect((await s.t.request({ method: 'POST', url: '/api/users', tenant: TENANT, token: await s.admin(), body: { ...plainUser, roles: ['user'] } })).status).toBe(201);
    const login = await s.t.request({ method: 'POST', url: '/api/auth/login', tenant: TENANT, body: plainUser });
    const subject = login.body.data.accessToken as string;
    expect(claimsOf(subject).scope).toBeUndefined();
    // The user holds view:audit through no role: the intersection drops it, it does not refuse the request.
    const exchanged = await client.genericGrantRequest(config, TOKEN_EXCHANGE, { subject_token: subject, subject_token_type: ACCESS, scope: 'view:audit' });
    expect(claimsOf(exchanged.access_token).scope ?? '').toBe('');
    expect((await s.t.request({ method: 'GET', url: '/api/logs/audit', tenant: TENANT, token: exchanged.access_token })).status).toBe(403);
  });
  it('userinfo releases the profile and email claims only to a token whose scope asked them (OIDC Core 5.4)', async () => {
    const spa = await s.createApplication({ name: 'openid-only', type: 'spa', redirectUris: [REDIRECT] });
    const config = await discover(s.issuer, spa.clientId, undefined, client.None());
    const { tokens } = await codeFlow(config, { scope: 'openid' });
    // The ID token holds no email for scope openid (OIDC Core 5.4); userinfo must not hand it out either.
    expect(tokens.claims()).not.toHaveProperty('email');
    const userinfo = await client.fetchUserInfo(config, tokens.access_token, tokens.claims()!.sub);
    expect(userinfo.sub).toBe(tokens.claims()!.sub);
    expect(userinfo).not.toHaveProperty('email');
    expect(userinfo).not.toHaveProperty('family_name');
  });
});
