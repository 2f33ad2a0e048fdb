import * as client from 'openid-client';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { discover, freshChecks, signIn, startOidcService, type OidcService } from './oidc-fixture.ts';

const headerOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[0]!, 'base64url').toString()) as { alg: string; kid: string };

/**
 * With IAM_JWT_ALG=HS256 access tokens are HMACs with the service's secret, which no client can
 * check; ID tokens are still RS256 with a key the JWKS publishes, so a relying party verifies them.
 */
describe('ID tokens under an HS256 configuration', () => {
  let s: OidcService;
  const REDIRECT = 'https://portal.example/callback';
  const AFTER_LOGOUT = 'https://portal.example/bye';

  beforeAll(async () => {
    s = await startOidcService({ IAM_JWT_ALG: 'HS256' });
  });
  afterAll(() => s.close());

  it('openid-client verifies the RS256 ID token against the JWKS, and the ID token ends its session at logout', async () => {
    const app = await s.createApplication({ name: 'portal', type: 'web', redirectUris: [REDIRECT], postLogoutRedirectUris: [AFTER_LOGOUT] });
    // Non-repudiation checks: openid-client verifies the ID token's signature with the JWKS.
    const config = await discover(s.issuer, app.clientId, app.clientSecret!, undefined, [client.enableNonRepudiationChecks]);
    const checks = await freshChecks();
    const url = client.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope: 'openid email', state: checks.expectedState, nonce: checks.expectedNonce, code_challenge: checks.codeChallenge, code_challenge_method: 'S256' });
    const tokens = await client.authorizationCodeGrant(config, new URL((await signIn(url)).headers.get('location')!), checks);

    expect(headerOf(tokens.access_token).alg).toBe('HS256');
    const idHeader = headerOf(tokens.id_token!);
    expect(idHeader.alg).toBe('RS256');
    const jwks = (await (await fetch(`${s.issuer}/.well-known/jwks.json`)).json()) as { keys: Array<{ kid: string; alg: string }> };
    expect(jwks.keys.map((key) => [key.kid, key.alg])).toEqual([[idHeader.kid, 'RS256']]);
    const { payload } = await jwtVerify(tokens.id_token!, createRemoteJWKSet(new URL(`${s.issuer}/.well-known/jwks.json`)), { issuer: s.issuer, audience: app.clientId });
    expect(payload).toMatchObject({ nonce: checks.expectedNonce, email: 'jo@acme.test' });
    // The HS256 access token still works where the service checks it.
    expect((await client.fetchUserInfo(config, tokens.access_token, payload.sub!)).sub).toBe(payload.sub);

    const logout = await fetch(client.buildEndSessionUrl(config, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: AFTER_LOGOUT }), { redirect: 'manual' });
    expect([logout.status, logout.headers.get('location')]).toEqual([302, AFTER_LOGOUT]);
    await expect(client.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('a rotation rotates both keys: the JWKS publishes the new RS256 key beside the old one, never the HS256 key', async () => {
    const before = (await s.t.request({ method: 'GET', url: '/.well-known/jwks.json' })).body.keys as Array<{ kid: string }>;
    const root = await s.t.token({ sub: 'root', tenant: 'platform', roles: ['admin'] });
    const accessKid = headerOf(root).kid;
    const rotated = await s.t.request({ method: 'POST', url: '/api/admin/signing-keys/rotate', tenant: 'platform', token: root });
    expect(rotated.status).toBe(200);
    expect(rotated.body.data.kid).not.toBe(accessKid);
    expect(headerOf(await s.t.token({ sub: 'root', tenant: 'platform', roles: ['admin'] })).kid).toBe(rotated.body.data.kid);
    const after = (await s.t.request({ method: 'GET', url: '/.well-known/jwks.json' })).body.keys as Array<{ kid: string; alg: string }>;
    expect(after).toHaveLength(2);
    expect(after.map((key) => key.kid)).toContain(before[0]!.kid);
    expect(after.every((key) => key.alg === 'RS256' && key.kid !== rotated.body.data.kid)).toBe(true);
  });
});

/**
 * With IAM_JWT_ALG=ES256 access tokens are ECDSA P-256 signatures that any client can check with the
 * JWKS, beside the RS256 keys of ID tokens.
 */
describe('ID tokens and access tokens under an ES256 configuration', () => {
  let s: OidcService;
  const REDIRECT = 'https://portal.example/callback';

  beforeAll(async () => {
    s = await startOidcService({ IAM_JWT_ALG: 'ES256' });
  });
  afterAll(() => s.close());

  it('openid-client verifies the RS256 ID token against a JWKS that also holds the ES256 key, which verifies the access token; refresh keeps ES256', async () => {
    const app = await s.createApplication({ name: 'portal', type: 'web', redirectUris: [REDIRECT] });
    const config = await discover(s.issuer, app.clientId, app.clientSecret!, undefined, [client.enableNonRepudiationChecks]);
    const checks = await freshChecks();
    const url = client.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope: 'openid email offline_access', state: checks.expectedState, nonce: checks.expectedNonce, code_challenge: checks.codeChallenge, code_challenge_method: 'S256' });
    const tokens = await client.authorizationCodeGrant(config, new URL((await signIn(url)).headers.get('location')!), checks);

    const accessHeader = headerOf(tokens.access_token);
    const idHeader = headerOf(tokens.id_token!);
    expect([accessHeader.alg, idHeader.alg]).toEqual(['ES256', 'RS256']);
    const jwks = (await (await fetch(`${s.issuer}/.well-known/jwks.json`)).json()) as { keys: Array<{ kid: string; alg: string }> };
    expect(jwks.keys.map((key) => [key.kid, key.alg])).toEqual([
      [accessHeader.kid, 'ES256'],
      [idHeader.kid, 'RS256'],
    ]);
    const keySet = createRemoteJWKSet(new URL(`${s.issuer}/.well-known/jwks.json`));
    const { payload } = await jwtVerify(tokens.access_token, keySet, { issuer: s.issuer, algorithms: ['ES256'] });
    expect(payload).toMatchObject({ client_id: app.clientId, sub: tokens.claims()!.sub });
    expect((await client.fetchUserInfo(config, tokens.access_token, tokens.claims()!.sub)).email).toBe('jo@acme.test');

    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    expect(headerOf(refreshed.access_token).alg).toBe('ES256');
    await jwtVerify(refreshed.access_token, keySet, { issuer: s.issuer, algorithms: ['ES256'] });
  });
});
