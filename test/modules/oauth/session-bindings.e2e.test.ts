import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimsOf, codeFlow, discover, REDIRECT, startOidcService, TENANT, USER, type OidcService } from './oidc-fixture.ts';

/**
 * The refresh grant remembers which client holds a session (src/modules/oauth/session-bindings.ts)
 * instead of reading the session's grant stream each time. What it remembers must never stand in
 * for the session's own state: reuse detection, revocation, a disabled user and the holding
 * client's checks work on the second and later refreshes as on the first.
 */
describe('refresh grants with remembered session bindings', () => {
  let s: OidcService;

  beforeAll(async () => {
    s = await startOidcService();
  });
  afterAll(() => s.close());

  const refresh = (refreshToken: string) =>
    s.t.request({ method: 'POST', url: '/api/auth/token', body: { grant_type: 'refresh_token', refresh_token: refreshToken } });

  const login = async (credentials = { email: USER.email, password: USER.password }) => {
    const answer = await s.t.request({ method: 'POST', url: '/api/auth/login', tenant: TENANT, body: credentials });
    expect(answer.status).toBe(200);
    return answer.body.data as { refreshToken: string; accessToken: string; sessionId: string };
  };

  it('a password-login session refreshes again and again; a reused token still revokes it', async () => {
    const { refreshToken: first } = await login();
    const second = await refresh(first);
    expect(second.status).toBe(200);
    expect(claimsOf(second.body.access_token)).not.toHaveProperty('client_id');
    const third = await refresh(second.body.refresh_token);
    expect(third.status).toBe(200);
    // The first token again: theft is assumed and the whole session ends.
    expect((await refresh(first)).body.error).toBe('invalid_grant');
    expect((await refresh(third.body.refresh_token)).body.error).toBe('invalid_grant');
  });

  it('a revoked session is refused although its binding is remembered', async () => {
    const { refreshToken } = await login();
    const rotated = await refresh(refreshToken);
    expect(rotated.status).toBe(200);
    const loggedOut = await s.t.request({ method: 'POST', url: '/api/auth/logout', tenant: TENANT, token: rotated.body.access_token });
    expect(loggedOut.status).toBe(200);
    expect((await refresh(rotated.body.refresh_token)).body.error).toBe('invalid_grant');
  });

  it("a client's session stays its own on every refresh: another client, no client, or a disabled user are refused", async () => {
    const person = { email: 'sam@acme.test', password: USER.password };
    const created = await s.t.request({ method: 'POST', url: '/api/users', tenant: TENANT, token: await s.admin(), body: person });
    expect(created.status).toBe(201);
    const app = await s.createApplication({ name: 'bound', type: 'web', redirectUris: [REDIRECT] });
    const config = await discover(s.issuer, app.clientId, app.clientSecret!);
    const { tokens } = await codeFlow(config, { scope: 'openid offline_access', credentials: person });
    const once = await client.refreshTokenGrant(config, tokens.refresh_token!);
    expect(claimsOf(once.access_token)).toMatchObject({ client_id: app.clientId, scope: 'openid offline_access' });
    const twice = await client.refreshTokenGrant(config, once.refresh_token!);
    expect(claimsOf(twice.access_token)).toMatchObject({ client_id: app.clientId });

    const other = await s.createApplication({ name: 'other-client', type: 'web', redirectUris: [REDIRECT] });
    const thief = await discover(s.issuer, other.clientId, other.clientSecret!);
    await expect(client.refreshTokenGrant(thief, twice.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    // Without client authentication the token is not taken for a password-login session's.
    expect((await refresh(twice.refresh_token!)).body.error).toBe('invalid_client');

    const disabled = await s.t.request({ method: 'PUT', url: `/api/users/${created.body.data.id}`, tenant: TENANT, token: await s.admin(), body: { enabled: false } });
    expect(disabled.status).toBe(200);
    await expect(client.refreshTokenGrant(config, twice.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
  });
});
