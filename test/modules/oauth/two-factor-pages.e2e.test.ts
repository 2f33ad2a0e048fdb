import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { base32Decode, timeStep, totpCode } from '../../../src/modules/mfa/totp.ts';
import { claimsOf, discover, expectSelfContainedPage, freshChecks, REDIRECT, startOidcService, submitForm, TENANT, type OidcService } from './oidc-fixture.ts';

const TIA = { email: 'tia@acme.test', password: 'Tia-Passw0rd!' };

/**
 * The service's own pages ask for the second factor (issue: OAuth, item 2): openid-client runs the
 * code flow and the device flow unmodified, and the pages, driven like a browser without
 * JavaScript, take the e-mail and password, then the code.
 */
describe('sign-in pages with a second factor', () => {
  let s: OidcService;
  let secret: string;
  let recoveryCodes: string[];
  // Each use takes a later step within the one step of drift: a code is accepted once.
  let lastOffset = -2;
  const freshCode = () => totpCode(base32Decode(secret), timeStep(new Date()) + ++lastOffset);
  const cookieOf = (response: Response, previous: string) => response.headers.get('set-cookie')?.split(';')[0] ?? previous;

  beforeAll(async () => {
    s = await startOidcService();
    const admin = await s.admin();
    expect((await s.t.request({ method: 'POST', url: '/api/users', tenant: TENANT, token: admin, body: TIA })).status).toBe(201);
    const token = (await s.t.request({ method: 'POST', url: '/api/auth/login', tenant: TENANT, body: TIA })).body.data.accessToken;
    secret = (await s.t.request({ method: 'POST', url: '/api/user/2fa/totp/setup', tenant: TENANT, token })).body.data.secret;
    const enabled = await s.t.request({ method: 'POST', url: '/api/user/2fa/totp/enable', tenant: TENANT, token, body: { code: freshCode() } });
    recoveryCodes = enabled.body.data.recoveryCodes;
  });
  afterAll(() => s.close());

  it('authorization code + PKCE: the page asks for the code after the password; the ID token says aal2', async () => {
    const app = await s.createApplication({ name: 'portal', type: 'web', redirectUris: [REDIRECT] });
    const config = await discover(s.issuer, app.clientId, app.clientSecret!);
    const checks = await freshChecks();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      scope: 'openid email',
      state: checks.expectedState,
      nonce: checks.expectedNonce,
      code_challenge: checks.codeChallenge,
      code_challenge_method: 'S256',
    });
    const page = await fetch(url);
    let cookie = cookieOf(page, '');
    const afterPassword = await submitForm(await page.text(), cookie, url, TIA);
    expect(afterPassword.status).toBe(200);
    cookie = cookieOf(afterPassword, cookie);
    const codePage = await expectSelfContainedPage(afterPassword);
    expect(codePage).toContain('name="mfa_token"');
    expect(codePage).toContain('autocomplete="one-time-code"');
    expect(codePage).not.toContain('name="password"');

    const wrong = await submitForm(codePage, cookie, url, { code: '000000' });
    expect(wrong.status).toBe(401);
    cookie = cookieOf(wrong, cookie);
    const again = await wrong.text();
    expect(again).toContain('The code is not valid');
    expect(again).toContain('name="mfa_token"');

    const done = await submitForm(again, cookie, url, { code: freshCode() });
    expect(done.status).toBe(302);
    const callback = new URL(done.headers.get('location')!);
    const tokens = await client.authorizationCodeGrant(config, callback, checks);
    expect(tokens.claims()).toMatchObject({ email: TIA.email, acr: 'aal2', amr: ['pwd', 'otp', 'mfa'] });
    expect(claimsOf(tokens.access_token)).toMatchObject({ acr: 'aal2', amr: ['pwd', 'otp', 'mfa'] });
    // The challenge was spent with the sign-in: posting it again starts over.
    const replay = await submitForm(again, cookie, url, { code: freshCode() });
    expect(replay.status).toBe(401);
    expect(await replay.text()).toContain('name="password"');
  });

  it('device flow: the verification page takes a recovery code; the CLI polls aal2 tokens', async () => {
    const native = await s.createApplication({ name: 'cli', type: 'native', redirectUris: ['http://127.0.0.1:8765/cb'] });
    const config = await discover(s.issuer, native.clientId, undefined, client.None());
    const started = await client.initiateDeviceAuthorization(config, { scope: 'openid' });
    const pageUrl = new URL(started.verification_uri_complete!);
    const page = await fetch(pageUrl);
    let cookie = cookieOf(page, '');
    const afterPassword = await submitForm(await page.text(), cookie, pageUrl, { ...TIA, user_code: started.user_code, decision: 'approve' });
    expect(afterPassword.status).toBe(200);
    cookie = cookieOf(afterPassword, cookie);
    const codePage = await afterPassword.text();
    expect(codePage).toContain('name="mfa_token"');
    expect(codePage).toContain(`name="user_code" value="${started.user_code}"`);
    const approved = await submitForm(codePage, cookie, pageUrl, { code: recoveryCodes[0]!, decision: 'approve' });
    expect(approved.status).toBe(200);
    expect(await approved.text()).toContain('connected');
    const tokens = await client.pollDeviceAuthorizationGrant(config, started);
    expect(tokens.claims()).toMatchObject({ acr: 'aal2', amr: ['pwd', 'mfa'] });
  });
});
