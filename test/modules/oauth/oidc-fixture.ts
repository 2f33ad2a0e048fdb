import * as client from 'openid-client';
import { expect } from 'vitest';
import { freePort } from '../../support/free-port.ts';
import { PLATFORM, startTestService, type TestService } from '../../support/service.ts';

export const TENANT = 'acme';
export const USER = { email: 'jo@acme.test', password: 'Acme-Us3r!', firstName: 'Jo', lastName: 'Doe' };
/** The redirect URI the tests' web and SPA clients register. */
export const REDIRECT = 'https://portal.example/callback';

/** The real service listening on a loopback port, its issuer that address: what a standard client is pointed at. */
export interface OidcService {
  t: TestService;
  issuer: string;
  admin(): Promise<string>;
  createApplication(body: Record<string, unknown>): Promise<{ id: string; clientId: string; clientSecret: string | null }>;
  close(): Promise<void>;
}

export async function startOidcService(env: Record<string, string> = {}): Promise<OidcService> {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const t = await startTestService({ env: { IAM_ISSUER: issuer, IAM_PUBLIC_URL: issuer, ARGON2_MEMORY_KIB: '1024', ARGON2_ITERATIONS: '1', ...env } });
  await t.service.app.listen({ port, host: '127.0.0.1' });
  const root = await t.token({ sub: 'root', tenant: PLATFORM, roles: ['admin'] });
  for (const name of [TENANT, 'other']) {
    expect((await t.request({ method: 'POST', url: '/api/tenants', tenant: PLATFORM, token: root, body: { name } })).status).toBe(201);
  }
  const admin = () => t.token({ sub: 'acme-admin', tenant: TENANT, roles: ['admin'] });
  expect((await t.request({ method: 'POST', url: '/api/users', tenant: TENANT, token: await admin(), body: { ...USER, roles: ['admin'] } })).status).toBe(201);
  return {
    t,
    issuer,
    admin,
    async createApplication(body) {
      const created = await t.request({ method: 'POST', url: '/api/applications', tenant: TENANT, token: await admin(), body });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      return created.body.data;
    },
    close: () => t.close(),
  };
}

/** openid-client configured from discovery alone; plain http only because the test server is on loopback. */
export const discover = (issuer: string, clientId: string, secret: string | undefined, auth?: client.ClientAuth, execute: Array<(config: client.Configuration) => void> = []) =>
  client.discovery(new URL(issuer), clientId, secret, auth, { execute: [client.allowInsecureRequests, ...execute] });

/** A browser without JavaScript: fetches the sign-in page, posts its form with the cookie it set, and stops at the redirect. */
export async function signIn(authorizationUrl: URL, credentials: { email: string; password: string } = USER): Promise<Response> {
  const page = await fetch(authorizationUrl, { redirect: 'manual' });
  expect(page.status, await page.clone().text()).toBe(200);
  return submitForm(await page.text(), page.headers.get('set-cookie')!.split(';')[0]!, authorizationUrl, credentials);
}

/** Posts a page's form as a browser would: its hidden fields, the fields typed, the page's cookie. */
export function submitForm(markup: string, cookie: string, pageUrl: URL, typed: Record<string, string>): Promise<Response> {
  const hidden = [...markup.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map(([, name, value]) => [name!, value!.replace(/&#(\d+);/g, (_m, c) => String.fromCharCode(Number(c)))]);
  const action = new URL(/<form method="post" action="([^"]+)"/.exec(markup)![1]!, pageUrl);
  return fetch(action, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
    body: new URLSearchParams([...hidden, ...Object.entries(typed)] as [string, string][]),
  });
}

/** PKCE, state and nonce for one authorization request. */
export async function freshChecks() {
  const pkceCodeVerifier = client.randomPKCECodeVerifier();
  return {
    pkceCodeVerifier,
    codeChallenge: await client.calculatePKCECodeChallenge(pkceCodeVerifier),
    expectedState: client.randomState(),
    expectedNonce: client.randomNonce(),
  };
}

/** A page that works without JavaScript and loads nothing from elsewhere (RFC 9700 4.2, 4.16): its markup and headers. */
export async function expectSelfContainedPage(page: Response): Promise<string> {
  const markup = await page.text();
  expect(markup).not.toMatch(/<script|\ssrc=|\shref=|url\(/i);
  const csp = page.headers.get('content-security-policy') ?? '';
  expect(csp).toContain("default-src 'none'");
  expect(csp).toContain("frame-ancestors 'none'");
  expect(page.headers.get('x-frame-options')).toBe('DENY');
  expect(page.headers.get('referrer-policy')).toBe('no-referrer');
  expect(page.headers.get('cache-control')).toBe('no-store');
  return markup;
}

export const claimsOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString());

/** The whole code flow for a client (PKCE, state, nonce, the sign-in page); answers the tokens and what was checked. */
export async function codeFlow(config: client.Configuration, { scope = 'openid profile email offline_access', credentials = USER }: { scope?: string; credentials?: { email: string; password: string } } = {}) {
  const checks = await freshChecks();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT,
    scope,
    state: checks.expectedState,
    nonce: checks.expectedNonce,
    code_challenge: checks.codeChallenge,
    code_challenge_method: 'S256',
  });
  const answer = await signIn(url, credentials);
  expect(answer.status).toBe(302);
  const callback = new URL(answer.headers.get('location')!);
  const tokens = await client.authorizationCodeGrant(config, callback, checks);
  return { tokens, callback, checks };
}
