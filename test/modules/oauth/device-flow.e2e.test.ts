import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimsOf, codeFlow, discover, expectSelfContainedPage, REDIRECT, startOidcService, TENANT, USER, type OidcService } from './oidc-fixture.ts';

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

/** RFC 8628 as a CLI does it (openid-client), and the verification page driven like a browser without JavaScript. */
describe('device authorization grant', () => {
  let s: OidcService;
  let native: { clientId: string };

  beforeAll(async () => {
    s = await startOidcService();
    native = await s.createApplication({ name: 'cli', type: 'native', redirectUris: ['http://127.0.0.1:8765/cb'] });
  });
  afterAll(() => s.close());

  const poll = (deviceCode: string, clientId = native.clientId) =>
    fetch(`${s.issuer}/api/auth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: DEVICE_GRANT, device_code: deviceCode, client_id: clientId }),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, string> }));

  it('openid-client starts, the user approves through the JSON endpoint, the CLI polls its tokens once', async () => {
    const config = await discover(s.issuer, native.clientId, undefined, client.None());
    expect(config.serverMetadata().device_authorization_endpoint).toBe(`${s.issuer}/api/oauth/device_authorization`);
    const started = await client.initiateDeviceAuthorization(config, { scope: 'openid email offline_access' });
    expect(started).toMatchObject({ verification_uri: `${s.issuer}/api/oauth/device`, expires_in: 600, interval: 5 });
    expect(started.user_code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    expect(started.verification_uri_complete).toBe(`${s.issuer}/api/oauth/device?user_code=${started.user_code}`);

    const userToken = (await s.t.request({ method: 'POST', url: '/api/auth/login', tenant: TENANT, body: { email: USER.email, password: USER.password } })).body.data.accessToken;
    const approved = await s.t.request({ method: 'POST', url: '/api/oauth/device/verify', token: userToken, body: { userCode: started.user_code.toLowerCase(), approve: true } });
    expect(approved.body).toEqual({ ok: true, data: { approved: true } });
    // Decided once: a second decision finds nothing pending.
    const again = await s.t.request({ method: 'POST', url: '/api/oauth/device/verify', token: userToken, body: { userCode: started.user_code, approve: false } });
    expect(again.status).toBe(404);

    const tokens = await client.pollDeviceAuthorizationGrant(config, started);
    const id = tokens.claims()!;
    expect(id).toMatchObject({ aud: native.clientId, email: USER.email });
    // The approval through the JSON endpoint is in the audit log: the user approved this client's session.
    expect(await s.t.service.runner.waitFor(await s.t.store.lastWrittenPosition(), 10_000, ['audit'])).toBe(true);
    const audit = await s.t.request({ method: 'GET', url: '/api/logs/audit?action=DEVICE_APPROVED', tenant: TENANT, token: await s.admin() });
    expect(audit.body.data.filter((entry: { resourceId: string }) => entry.resourceId === id.sid)).toEqual([
      expect.objectContaining({ action: 'DEVICE_APPROVED', userId: id.sub, resource: 'session', status: 'success', metadata: expect.objectContaining({ clientId: native.clientId, scope: ['openid', 'email', 'offline_access'] }) }),
    ]);
    expect(claimsOf(tokens.access_token)).toMatchObject({ client_id: native.clientId, scope: 'openid email offline_access' });
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    expect(claimsOf(refreshed.access_token).scope).toBe('openid email offline_access');
    // The device code is spent.
    expect((await poll(started.device_code)).body.error).toBe('invalid_grant');
  });

  it('pending, slow_down on a polling storm, denial on the verification page, codes of another client or tenant', async () => {
    const start = async () =>
      (await (
        await fetch(`${s.issuer}/api/oauth/device_authorization`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ client_id: native.clientId, scope: 'openid' }),
        })
      ).json()) as { device_code: string; user_code: string; verification_uri_complete: string };
    const started = await start();
    // Another client presenting the code: refused.
    const other = await s.createApplication({ name: 'other-cli', type: 'native', redirectUris: ['http://127.0.0.1:8765/cb'] });
    expect((await poll(started.device_code, other.clientId)).body.error).toBe('invalid_grant');
    await new Promise((resolve) => setTimeout(resolve, 4_100));
    expect(await poll(started.device_code)).toEqual({ status: 400, body: { error: 'authorization_pending', error_description: expect.any(String) } });
    expect((await poll(started.device_code)).body.error).toBe('slow_down');
    expect((await poll(started.device_code)).body.error).toBe('slow_down');


    // acme's client presented with x-tenant other: no device code, no poll (RFC errors, never a token).
    const form = { 'content-type': 'application/x-www-form-urlencoded', 'x-tenant': 'other' };
    const foreignStart = await fetch(`${s.issuer}/api/oauth/device_authorization`, { method: 'POST', headers: form, body: new URLSearchParams({ client_id: native.clientId, scope: 'openid' }) });
    expect([foreignStart.status, ((await foreignStart.json()) as { error: string }).error]).toEqual([401, 'invalid_client']);
    const foreignPoll = await fetch(`${s.issuer}/api/auth/token`, { method: 'POST', headers: form, body: new URLSearchParams({ grant_type: DEVICE_GRANT, device_code: started.device_code, client_id: native.clientId }) });
    expect([foreignPoll.status, ((await foreignPoll.json()) as { error: string }).error]).toEqual([401, 'invalid_grant']);

    // A user of another tenant cannot approve acme's device.
    const foreign = await s.t.token({ sub: '00000000-0000-4000-8000-000000000001', tenant: 'other', roles: ['admin'] });
    expect((await s.t.request({ method: 'POST', url: '/api/oauth/device/verify', token: foreign, body: { userCode: started.user_code, approve: true } })).status).toBe(404);

    // The verification page: sign in and deny.
    const page = await fetch(started.verification_uri_complete);
    const markup = await expectSelfContainedPage(page);
    expect(markup).toContain(`value="${started.user_code}"`);
    const csrf = /name="csrf" value="([^"]*)"/.exec(markup)![1]!.replace(/&#(\d+);/g, (_m, c) => String.fromCharCode(Number(c)));
    const cookie = page.headers.get('set-cookie')!.split(';')[0]!;
    const post = (fields: Record<string, string>, withCookie = true) =>
      fetch(`${s.issuer}/api/oauth/device`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...(withCookie ? { cookie } : {}) },
        body: new URLSearchParams({ csrf, user_code: started.user_code, email: USER.email, password: USER.password, ...fields }),
      });
    expect((await post({ decision: 'approve' }, false)).status).toBe(403);
    expect((await post({ decision: 'approve', password: 'wrong-Passw0rd' })).status).toBe(401);
    expect((await post({ decision: 'approve', user_code: 'BCDF-GHJK' })).status).toBe(400);
    const denied = await post({ decision: 'deny' });
    expect(denied.status).toBe(200);
    expect(await denied.text()).toContain('not connected');
    await new Promise((resolve) => setTimeout(resolve, 4_100));
    expect((await poll(started.device_code)).body.error).toBe('access_denied');

    // The page approves too.
    const second = await start();
    expect((await post({ decision: 'approve', user_code: second.user_code.toLowerCase() })).status).toBe(200);
    const granted = await poll(second.device_code);
    expect(granted.status).toBe(200);
    expect(granted.body.id_token).toBeTruthy();
  });
  const startDevice = async (scope: string) =>
    (await (
      await fetch(`${s.issuer}/api/oauth/device_authorization`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ client_id: native.clientId, scope }),
      })
    ).json()) as { device_code: string; user_code: string };
  const userLogin = async () =>
    (await s.t.request({ method: 'POST', url: '/api/auth/login', tenant: TENANT, body: { email: USER.email, password: USER.password } })).body.data.accessToken as string;

  it('a token restricted to a scope cannot approve a device that asks for more than that scope', async () => {
    // An SPA holds a token of scope `openid` only (RFC 9700 2.3: privilege restriction).
    const spa = await s.createApplication({ name: 'narrow-spa', type: 'spa', redirectUris: [REDIRECT] });
    const { tokens } = await codeFlow(await discover(s.issuer, spa.clientId, undefined, client.None()), { scope: 'openid' });
    expect(claimsOf(tokens.access_token).scope).toBe('openid');
    // With it, it approves a device flow it started itself, asking an administrator's permission.
    const started = await startDevice('manage:users');
    const approved = await s.t.request({ method: 'POST', url: '/api/oauth/device/verify', token: tokens.access_token, body: { userCode: started.user_code, approve: true } });
    expect(approved.status).toBe(403);
    // Nothing was approved: the device gets no token of scope manage:users (and no refresh token).
    expect((await poll(started.device_code)).body.error).toBe('authorization_pending');
  });

  it('the access token of a revoked session cannot approve a device (no new session from a revoked one)', async () => {
    const token = await userLogin();
    expect((await s.t.request({ method: 'POST', url: '/api/auth/logout', token })).status).toBe(200);
    const started = await startDevice('openid');
    const approved = await s.t.request({ method: 'POST', url: '/api/oauth/device/verify', token, body: { userCode: started.user_code, approve: true } });
    expect(approved.status).toBeGreaterThanOrEqual(400);
    // The revoked session's access token did not become a new session with a refresh token.
    expect((await poll(started.device_code)).body.error).toBe('authorization_pending');
  });

  it("polls with a made-up device code for a user code do not slow down that code's device (another tenant's client included)", async () => {
    const started = await startDevice('openid');
    const approved = await s.t.request({ method: 'POST', url: '/api/oauth/device/verify', token: await userLogin(), body: { userCode: started.user_code, approve: true } });
    expect(approved.status).toBe(200);
    // Someone who read the user code off the screen polls with it and a made-up secret, through a client of their own tenant.
    const otherAdmin = await s.t.token({ sub: 'other-admin', tenant: 'other', roles: ['admin'] });
    const theirs = (await s.t.request({ method: 'POST', url: '/api/applications', tenant: 'other', token: otherAdmin, body: { name: 'cli', type: 'native', redirectUris: ['http://127.0.0.1:8765/cb'] } })).body.data as { clientId: string };
    const userCode = started.device_code.split('.')[0]!;
    expect((await poll(`${userCode}.${'A'.repeat(43)}`, theirs.clientId)).body.error).toBe('invalid_grant');
    // The genuine device's first poll gets its tokens, not slow_down.
    const genuine = await poll(started.device_code);
    expect(genuine.body.error).toBeUndefined();
    expect(genuine.status).toBe(200);
  });
  it('the verification page names the application asking and what it asks before the user connects it (RFC 8628 3.3, 5.4)', async () => {
    const started = await startDevice('openid manage:users');
    const page = await fetch(`${s.issuer}/api/oauth/device?user_code=${started.user_code}`);
    const markup = await expectSelfContainedPage(page);
    // The user approving in the same step as signing in must see whom they connect: remote phishing sends this very link.
    expect(markup).toMatch(/\bcli\b/);
    expect(markup).toContain('manage:users');
  });
  it("an approval with a bearer token: the ID token's auth_time is when the user signed in, not when they approved (OIDC Core 2)", async () => {
    const signedInAt = Math.floor(Date.now() / 1000);
    const token = await userLogin();
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    const started = await startDevice('openid');
    expect((await s.t.request({ method: 'POST', url: '/api/oauth/device/verify', token, body: { userCode: started.user_code, approve: true } })).status).toBe(200);
    const tokens = await poll(started.device_code);
    expect(tokens.status).toBe(200);
    expect(claimsOf(tokens.body.id_token!).auth_time).toBeLessThanOrEqual(signedInAt + 1);
  });
});
