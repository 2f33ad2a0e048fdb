import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { base32Decode, timeStep, totpCode } from '../../../src/modules/mfa/totp.ts';
import { ManualClock } from '../../../src/platform/clock.ts';
import { PLATFORM, startTestService, type TestService } from '../../support/service.ts';
import { startSmtpServer, type TestSmtpServer } from '../../support/smtp-server.ts';

const BEA = { email: 'bea@p.test', password: 'Bea-Passw0rd' };

/** The pages e-mailed links open, driven as a browser would: follow the link, GET, submit the form. */
describe('reset-password and magic-link pages', () => {
  let t: TestService;
  let smtp: TestSmtpServer;
  const clock = new ManualClock(new Date());
  const admin = () => t.token({ sub: 'admin', tenant: PLATFORM, roles: ['admin'] });
  const login = (password: string) => t.request({ method: 'POST', url: '/api/auth/login', tenant: PLATFORM, body: { email: BEA.email, password } });

  /** Asks for a link through the API and answers the page address (path and query) from the e-mail. */
  const mailedLink = async (api: string, subject: string) => {
    const before = smtp.messages.length;
    await t.request({ method: 'POST', url: api, tenant: PLATFORM, body: { email: BEA.email } });
    const mail = await smtp.waitForMessage((m) => smtp.messages.indexOf(m) >= before && m.subject === subject);
    const link = new URL(/https?:\/\/\S+/.exec(mail.text!)![0]);
    expect(link.origin).toBe('http://iam.test');
    return link.pathname + link.search;
  };

  /** GET a page: its HTML, headers, the cookie it sets and its form's hidden fields. */
  const open = async (path: string) => {
    const page = await t.service.app.inject({ method: 'GET', url: path });
    const cookie = String(page.headers['set-cookie'] ?? '').split(';')[0]!;
    // As a browser reads them: character references decoded.
    const decode = (value: string) => value.replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code)));
    const hidden = Object.fromEntries([...page.body.matchAll(/<input type="hidden" name="(\w+)" value="([^"]*)">/g)].map((m) => [m[1], decode(m[2]!)]));
    return { status: page.statusCode, html: page.body, headers: page.headers, cookie, hidden };
  };
  const submit = async (action: string, cookie: string, fields: Record<string, string>) => {
    const answer = await t.service.app.inject({
      method: 'POST',
      url: `/${action}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie ? { cookie } : {}) },
      payload: new URLSearchParams(fields).toString(),
    });
    return { status: answer.statusCode, html: answer.body, headers: answer.headers };
  };

  beforeAll(async () => {
    smtp = await startSmtpServer();
    t = await startTestService({ clock, env: { SMTP_URL: smtp.url } });
    await t.request({ method: 'POST', url: '/api/users', tenant: PLATFORM, token: await admin(), body: BEA });
  });
  afterAll(async () => {
    await t.close();
    await smtp.close();
  });

  it('serves a self-contained page under a strict CSP; opening it does not spend the link', async () => {
    const path = await mailedLink('/api/auth/forgot-password', 'Reset your password');
    expect(path.startsWith('/reset-password?tenant=platform&token=')).toBe(true);
    const first = await open(path);
    expect(first.status).toBe(200);
    expect(first.headers['content-type']).toBe('text/html; charset=utf-8');
    const csp = String(first.headers['content-security-policy']);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("form-action 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(first.headers['referrer-policy']).toBe('no-referrer');
    expect(first.html).not.toMatch(/<script|src=|href=/);
    expect(first.html).toContain('<form method="post" action="reset-password">');
    expect(first.cookie).toMatch(/^iam_form=/);
    expect(String(first.headers['set-cookie'])).toContain('HttpOnly; SameSite=Strict');
    const second = await open(path);
    expect(second.hidden.token).toBe(new URLSearchParams(path.split('?')[1]).get('token'));
  });

  it('resets the password from the e-mailed link: mismatch, policy and CSRF failures keep the link; then login works', async () => {
    const page = await open(await mailedLink('/api/auth/forgot-password', 'Reset your password'));
    const fields = (newPassword: string, confirmPassword = newPassword) => ({ ...page.hidden, newPassword, confirmPassword });

    const mismatch = await submit('reset-password', page.cookie, fields('Page-Passw0rd', 'Page-Passw0rd2'));
    expect([mismatch.status, mismatch.html.includes('The two passwords do not match.')]).toEqual([400, true]);
    const weak = await submit('reset-password', page.cookie, fields('short'));
    expect(weak.status).toBe(400);
    expect(weak.html).toContain('<li>Password below the minimum length</li>');
    const reused = await submit('reset-password', page.cookie, fields(BEA.password));
    expect(reused.html).toContain('<li>Password must differ from the last 5 passwords</li>');
    expect(weak.html).toContain('name="newPassword"');

    // Another site's form: no cookie, or the cookie of another browser, or a value for another link.
    expect((await submit('reset-password', '', fields('Page-Passw0rd'))).status).toBe(403);
    const other = await open(await mailedLink('/api/auth/forgot-password', 'Reset your password'));
    expect((await submit('reset-password', other.cookie, fields('Page-Passw0rd'))).status).toBe(403);
    expect((await submit('reset-password', page.cookie, { ...fields('Page-Passw0rd'), csrf: other.hidden.csrf! })).status).toBe(403);

    const done = await submit('reset-password', page.cookie, fields('Page-Passw0rd'));
    expect(done.status).toBe(200);
    expect(done.html).toContain('Your password has been changed');
    expect((await login('Page-Passw0rd')).status).toBe(200);
    expect((await login(BEA.password)).status).toBe(401);

    const again = await submit('reset-password', page.cookie, fields('Again-Passw0rd'));
    expect([again.status, again.html.includes('not valid or has already been used')]).toEqual([400, true]);
  });

  it('an expired reset link says so', async () => {
    const page = await open(await mailedLink('/api/auth/forgot-password', 'Reset your password'));
    clock.advance(1801_000);
    const late = await submit('reset-password', page.cookie, { ...page.hidden, newPassword: 'Late-Passw0rd', confirmPassword: 'Late-Passw0rd' });
    expect([late.status, late.html.includes('This link has expired.')]).toEqual([400, true]);
  });

  it('a magic link signs in on POST only, shows no token, and cannot be used twice', async () => {
    const sessions = async () => (await t.db.pool.query("select count(*)::int as n from events where type = 'SessionStarted'")).rows[0].n as number;
    const path = await mailedLink('/api/auth/magic-link', 'Your sign-in link');
    expect(path.startsWith('/magic-link?tenant=platform&token=')).toBe(true);
    const before = await sessions();
    const page = await open(path);
    await open(path); // a mail scanner's prefetch
    expect(page.html).toContain('<button type="submit">Sign in</button>');
    expect(await sessions()).toBe(before);

    const signedIn = await submit('magic-link', page.cookie, page.hidden);
    expect(signedIn.status).toBe(200);
    expect(signedIn.html).toContain('You are signed in');
    expect(signedIn.html).not.toMatch(/eyJ|refresh|token/i);
    expect(await sessions()).toBe(before + 1);
    const amr = await t.db.pool.query("select data->'amr' as amr from events where type = 'SessionStarted' order by position desc limit 1");
    expect(amr.rows[0].amr).toEqual(['email']);

    const reused = await submit('magic-link', page.cookie, page.hidden);
    expect([reused.status, reused.html.includes('not valid or has already been used')]).toEqual([400, true]);
  });

  it('escapes whatever the query holds, and refuses unknown tenants and missing tokens', async () => {
    const hostile = '"><script>alert(1)</script>';
    const page = await open(`/reset-password?tenant=platform&token=${encodeURIComponent(hostile)}`);
    expect(page.html).not.toContain('<script>');
    expect(page.html).toContain('&#34;&#62;&#60;script&#62;');
    const posted = await submit('reset-password', page.cookie, { ...page.hidden, newPassword: 'Any-Passw0rd1', confirmPassword: 'Any-Passw0rd1' });
    expect([posted.status, posted.html.includes('not valid or has already been used')]).toEqual([400, true]);
    for (const path of ['/magic-link?tenant=ghost-tenant&token=x.y', '/magic-link?tenant=platform', '/reset-password']) {
      const refused = await open(path);
      expect([refused.status, refused.html.includes('not valid')]).toEqual([400, true]);
    }
  });

  it('the access log never shows a link token', async () => {
    const lines: string[] = [];
    const pino = (await import('pino')).default;
    const logged = await startTestService({ db: t.db, logger: pino({ level: 'info' }, { write: (line: string) => void lines.push(line) }) });
    try {
      await logged.service.app.inject({ method: 'GET', url: '/magic-link?tenant=platform&token=secret-link-token' });
    } finally {
      await logged.close();
    }
    const access = lines.map((line) => JSON.parse(line)).find((entry) => entry.msg === 'request completed');
    expect(access.url).toBe('/magic-link?tenant=platform&token=[REDACTED]');
    expect(lines.join('\n')).not.toContain('secret-link-token');
  });

  it('on an account with TOTP, the magic-link page asks for the code before the session starts', async () => {
    const token = (await login('Page-Passw0rd')).body.data.accessToken;
    const secret = (await t.request({ method: 'POST', url: '/api/user/2fa/totp/setup', tenant: PLATFORM, token })).body.data.secret;
    const code = (offset: number) => totpCode(base32Decode(secret), timeStep(clock.now()) + offset);
    expect((await t.request({ method: 'POST', url: '/api/user/2fa/totp/enable', tenant: PLATFORM, token, body: { code: code(-1) } })).status).toBe(200);
    const sessions = async () => (await t.db.pool.query("select count(*)::int as n from events where type = 'SessionStarted'")).rows[0].n as number;
    const before = await sessions();
    const page = await open(await mailedLink('/api/auth/magic-link', 'Your sign-in link'));
    const asked = await submit('magic-link', page.cookie, page.hidden);
    expect(asked.status).toBe(200);
    expect(asked.html).toContain('name="mfa_token"');
    expect(asked.html).not.toContain('You are signed in');
    expect(await sessions()).toBe(before);
    const codePage = Object.fromEntries([...asked.html.matchAll(/<input type="hidden" name="(\w+)" value="([^"]*)">/g)].map((m) => [m[1], m[2]!.replace(/&#(\d+);/g, (_, c: string) => String.fromCharCode(Number(c)))]));
    const cookie = String(asked.headers['set-cookie'] ?? '').split(';')[0] || page.cookie;
    const wrong = await submit('magic-link', cookie, { ...codePage, code: '000000' });
    expect([wrong.status, wrong.html.includes('The code is not valid')]).toEqual([400, true]);
    const done = await submit('magic-link', String(wrong.headers['set-cookie'] ?? '').split(';')[0] || cookie, { ...codePage, code: code(0) });
    expect([done.status, done.html.includes('You are signed in')]).toEqual([200, true]);
    expect(await sessions()).toBe(before + 1);
    const amr = await t.db.pool.query("select data->'amr' as amr from events where type = 'SessionStarted' order by position desc limit 1");
    expect(amr.rows[0].amr).toEqual(['email', 'otp', 'mfa']);
  });
});
