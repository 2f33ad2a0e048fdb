import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { discover, expectSelfContainedPage, freshChecks, signIn, startOidcService, submitForm, TENANT, USER, type OidcService } from './oidc-fixture.ts';

/** Bad input at the authorization endpoint and the code exchange: refused with the RFC error, never a token. */
describe('authorization endpoint and code exchange refusals', () => {
  let s: OidcService;
  let app: { clientId: string; clientSecret: string | null };
  let spa: { clientId: string };
  const REDIRECT = 'https://portal.example/callback';

  beforeAll(async () => {
    s = await startOidcService();
    app = await s.createApplication({ name: 'portal', type: 'web', redirectUris: [REDIRECT] });
    spa = await s.createApplication({ name: 'spa', type: 'spa', redirectUris: [REDIRECT] });
  });
  afterAll(() => s.close());

  const authorize = (params: Record<string, string>, headers: Record<string, string> = {}) =>
    fetch(`${s.issuer}/api/oauth/authorize?${new URLSearchParams(params)}`, { redirect: 'manual', headers });
  const base = async (clientId = app.clientId) => {
    const checks = await freshChecks();
    return { response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, scope: 'openid', state: 'st-1', code_challenge: checks.codeChallenge, code_challenge_method: 'S256' };
  };
  const errorOf = (response: Response) => {
    expect(response.status).toBe(302);
    const location = new URL(response.headers.get('location')!);
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT);
    return Object.fromEntries(location.searchParams);
  };
  const token = (params: Record<string, string>) =>
    fetch(`${s.issuer}/api/auth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(params) });

  it('never redirects to an unregistered redirect_uri (trailing slash, case, other host), for an unknown client or another tenant\'s', async () => {
    for (const redirect_uri of [`${REDIRECT}/`, REDIRECT.replace('callback', 'Callback'), 'https://PORTAL.example/callback', 'https://evil.example/callback', `${REDIRECT}?x=1`]) {
      const response = await authorize({ ...(await base()), redirect_uri });
      expect(response.status, redirect_uri).toBe(400);
      expect(response.headers.get('location')).toBeNull();
      expect(response.headers.get('content-type')).toContain('text/html');
    }
    expect((await authorize({ ...(await base()), client_id: `${TENANT}.00000000-0000-4000-8000-000000000000` })).status).toBe(400);
    // A client of acme presented as the other tenant's (decisions.md: both given must agree, else 401): a page, no redirect.
    const foreign = await authorize(await base(), { 'x-tenant': 'other' });
    expect([foreign.status, foreign.headers.get('location')]).toEqual([401, null]);
    expect((await authorize(await base(), { 'x-tenant': TENANT })).status).toBe(200);
  });

  it('redirects RFC 6749 errors with state: missing state, plain PKCE, a public client without PKCE, unknown scope, prompt=none', async () => {
    const { state: _state, ...noState } = await base();
    expect(errorOf(await authorize(noState))).toMatchObject({ error: 'invalid_request', iss: s.issuer });
    expect(errorOf(await authorize({ ...(await base()), code_challenge_method: 'plain' }))).toMatchObject({ error: 'invalid_request', state: 'st-1' });
    const { code_challenge: _c, code_challenge_method: _m, ...noPkce } = await base(spa.clientId);
    expect(errorOf(await authorize(noPkce))).toMatchObject({ error: 'invalid_request', state: 'st-1' });
    expect(errorOf(await authorize({ ...(await base()), scope: 'openid rule:everything' }))).toMatchObject({ error: 'invalid_scope', state: 'st-1' });
    expect(errorOf(await authorize({ ...(await base()), response_type: 'token' }))).toMatchObject({ error: 'unsupported_response_type' });
    expect(errorOf(await authorize({ ...(await base()), prompt: 'none' }))).toMatchObject({ error: 'login_required' });
    // Only what discovery lists: response_mode query, no request objects.
    expect(errorOf(await authorize({ ...(await base()), response_mode: 'form_post' }))).toMatchObject({ error: 'invalid_request', state: 'st-1' });
    expect(errorOf(await authorize({ ...(await base()), request: 'eyJhbGciOiJub25lIn0.e30.' }))).toMatchObject({ error: 'invalid_request', state: 'st-1' });
    expect(errorOf(await authorize({ ...(await base()), request_uri: 'https://evil.example/request.jwt' }))).toMatchObject({ error: 'invalid_request', state: 'st-1' });
  });

  it('the sign-in form: wrong credentials show it again, a form without its cookie is refused', async () => {
    const config = await discover(s.issuer, app.clientId, app.clientSecret!);
    const url = client.buildAuthorizationUrl(config, await base());
    const wrong = await signIn(url, { email: USER.email, password: 'not-the-password' });
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).toContain('Invalid email or password');
    const wrongAgain = await signIn(url, { email: USER.email, password: 'not-the-password-either' });
    const page = await (await fetch(url)).text();
    const requestId = /name="request_id" value="([^"]*)"/.exec(page)![1]!.replace(/&#(\d+);/g, (_m, c) => String.fromCharCode(Number(c)));
    const forged = await fetch(`${s.issuer}/api/oauth/authenticate`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ request_id: requestId, csrf: 'x', ...USER }),
    });
    expect(forged.status).toBe(403);
    const page2 = await fetch(url);
    expect(page2.headers.get('content-security-policy')).toContain("form-action 'self' https://portal.example");
    // Plain HTML: no script, nothing loaded from elsewhere, never framed; the form posts to the service itself.
    expect(await expectSelfContainedPage(page2)).toContain('<form method="post" action="/api/oauth/authenticate">');
    expect(await expectSelfContainedPage(wrongAgain)).toContain('name="request_id"');
  });

  it('a replayed code is refused and revokes the tokens issued from it; a verifier of another code or another client is refused', async () => {
    const config = await discover(s.issuer, app.clientId, app.clientSecret!);
    const first = await freshChecks();
    const second = await freshChecks();
    const codeOf = async (checks: Awaited<ReturnType<typeof freshChecks>>) => {
      const url = client.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope: 'openid', state: checks.expectedState, code_challenge: checks.codeChallenge, code_challenge_method: 'S256' });
      return new URL((await signIn(url)).headers.get('location')!).searchParams.get('code')!;
    };
    const code = await codeOf(first);
    const secondCode = await codeOf(second);
    const exchange = (c: string, verifier: string, extra: Record<string, string> = {}) =>
      token({ grant_type: 'authorization_code', code: c, redirect_uri: REDIRECT, code_verifier: verifier, client_id: app.clientId, client_secret: app.clientSecret!, ...extra });

    const crossed = await exchange(secondCode, first.pkceCodeVerifier);
    expect([crossed.status, ((await crossed.json()) as { error: string }).error]).toEqual([400, 'invalid_grant']);
    const bySpa = await token({ grant_type: 'authorization_code', code: secondCode, redirect_uri: REDIRECT, code_verifier: second.pkceCodeVerifier, client_id: spa.clientId });
    expect([bySpa.status, ((await bySpa.json()) as { error: string }).error]).toEqual([400, 'invalid_grant']);
    const noRedirect = await token({ grant_type: 'authorization_code', code: secondCode, code_verifier: second.pkceCodeVerifier, client_id: app.clientId, client_secret: app.clientSecret! });
    expect([noRedirect.status, ((await noRedirect.json()) as { error: string }).error]).toEqual([400, 'invalid_grant']);

    // The code of a client of acme, redeemed with x-tenant other: refused, and the code is not spent by it.
    const foreign = await fetch(`${s.issuer}/api/auth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-tenant': 'other' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: first.pkceCodeVerifier, client_id: app.clientId, client_secret: app.clientSecret! }),
    });
    expect([foreign.status, ((await foreign.json()) as { error: string }).error]).toEqual([401, 'invalid_grant']);

    const granted = await exchange(code, first.pkceCodeVerifier);
    expect(granted.status).toBe(200);
    const tokens = (await granted.json()) as { refresh_token: string; access_token: string };
    const replay = await exchange(code, first.pkceCodeVerifier);
    expect([replay.status, ((await replay.json()) as { error: string }).error]).toEqual([400, 'invalid_grant']);
    // What the code issued is revoked: its refresh token no longer works.
    await expect(client.refreshTokenGrant(config, tokens.refresh_token)).rejects.toMatchObject({ error: 'invalid_grant' });
    const revoked = await s.t.db.pool.query("select data->>'reason' as reason from events where type = 'SessionRevoked' and data->>'sessionId' = $1", [
      JSON.parse(Buffer.from(tokens.access_token.split('.')[1]!, 'base64url').toString()).sid,
    ]);
    expect(revoked.rows).toEqual([{ reason: 'authorization_code_reuse' }]);
    // The code never appears in the log in clear.
    expect((await s.t.db.pool.query("select 1 from events where data::text like '%' || $1 || '%'", [code.split('.').at(-1)])).rows).toEqual([]);
  });

  it('a malformed code or refresh token is invalid_grant (not a missing tenant) when the client_id names the tenant; a missing code is invalid_request', async () => {
    const client_ = { client_id: app.clientId, client_secret: app.clientSecret! };
    const errorBody = async (response: Response) => [response.status, ((await response.json()) as { error: string }).error];
    for (const code of ['garbage', `${TENANT}.not-a-code`]) {
      expect(await errorBody(await token({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: 'v'.repeat(43), ...client_ }))).toEqual([400, 'invalid_grant']);
    }
    expect(await errorBody(await token({ grant_type: 'refresh_token', refresh_token: 'garbage', ...client_ }))).toEqual([400, 'invalid_grant']);
    const missing = await token({ grant_type: 'authorization_code', redirect_uri: REDIRECT, code_verifier: 'v'.repeat(43), ...client_ });
    expect(await missing.json()).toEqual({ error: 'invalid_request', error_description: 'The code parameter is required' });
    // With client_secret_basic too: the Authorization header's client_id names the tenant.
    const basic = await fetch(`${s.issuer}/api/auth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${encodeURIComponent(app.clientId)}:${encodeURIComponent(app.clientSecret!)}`).toString('base64')}` },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: 'garbage', redirect_uri: REDIRECT, code_verifier: 'v'.repeat(43) }),
    });
    expect(await errorBody(basic)).toEqual([400, 'invalid_grant']);
  });
  it('a sign-in form opened before its redirect_uri was unregistered issues no code to that address', async () => {
    const LEAVING = 'https://old.example/callback';
    const created = await s.createApplication({ name: 'moving', type: 'web', redirectUris: [REDIRECT, LEAVING] });
    const url = new URL(`${s.issuer}/api/oauth/authorize?${new URLSearchParams({ ...(await base(created.clientId)), redirect_uri: LEAVING })}`);
    const page = await fetch(url, { redirect: 'manual' });
    expect(page.status).toBe(200);
    const markup = await page.text();
    // The administrator removes the address (say it was taken over) while the form is open.
    const removed = await s.t.request({ method: 'PUT', url: `/api/applications/${(created as { id: string }).id}`, tenant: TENANT, token: await s.admin(), body: { redirectUris: [REDIRECT] } });
    expect(removed.status, JSON.stringify(removed.body)).toBe(200);
    const answer = await submitForm(markup, page.headers.get('set-cookie')!.split(';')[0]!, url, USER);
    expect(answer.headers.get('location') ?? '').not.toContain('old.example');
    expect(answer.status).toBe(400);
  });
});
