import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/platform/clock.ts';
import { PLATFORM, startTestService, type TestService } from '../../support/service.ts';
import { startSmtpServer, type TestSmtpServer } from '../../support/smtp-server.ts';

const ANA = { email: 'ana@p.test', password: 'Ana-Passw0rd' };

describe('forgot / reset password and magic links, mailed through a real SMTP server', () => {
  let t: TestService;
  let smtp: TestSmtpServer;
  const clock = new ManualClock(new Date());
  const admin = () => t.token({ sub: 'admin', tenant: PLATFORM, roles: ['admin'] });
  const post = (url: string, body: unknown) => t.request({ method: 'POST', url, tenant: PLATFORM, body });
  const login = (password: string) => post('/api/auth/login', { email: ANA.email, password });
  /** Asks for a link and returns the token from the e-mail that arrives. */
  const mailedToken = async (url: string, subject: string) => {
    const before = smtp.messages.length;
    expect((await post(url, { email: ANA.email })).body).toEqual({ ok: true, data: { sent: true } });
    const mail = await smtp.waitForMessage((m) => smtp.messages.indexOf(m) >= before && m.subject === subject);
    expect(mail.to).toEqual([ANA.email]);
    const link = new URL(/https?:\/\/\S+/.exec(mail.text!)![0]);
    expect(link.searchParams.get('tenant')).toBe(PLATFORM);
    return link.searchParams.get('token')!;
  };
  const resetToken = () => mailedToken('/api/auth/forgot-password', 'Reset your password');
  const magicToken = () => mailedToken('/api/auth/magic-link', 'Your sign-in link');

  beforeAll(async () => {
    smtp = await startSmtpServer();
    t = await startTestService({ clock, env: { SMTP_URL: smtp.url, IAM_PUBLIC_URL: 'https://console.iam.test/app' } });
    await t.request({ method: 'POST', url: '/api/users', tenant: PLATFORM, token: await admin(), body: ANA });
  });
  afterAll(async () => {
    await t.close();
    await smtp.close();
  });

  it('forgot-password answers the same for unknown and disabled accounts, and mails only real ones', async () => {
    await t.request({ method: 'POST', url: '/api/users', tenant: PLATFORM, token: await admin(), body: { email: 'off@p.test', enabled: false } });
    for (const email of ['nobody@p.test', 'off@p.test']) {
      expect((await post('/api/auth/forgot-password', { email })).body).toEqual({ ok: true, data: { sent: true } });
    }
    await t.service.background.drain();
    expect(smtp.messages).toEqual([]);
    const token = await resetToken();
    expect(token).toMatch(/^[0-9a-f-]{36}\.[A-Za-z0-9_-]{43}$/);
    const mail = smtp.messages.at(-1)!;
    expect(mail.text).toContain('https://console.iam.test/app/reset-password?tenant=platform&token=');
    const issued = await t.db.pool.query<{ data: object }>("select data from events where type = 'EmailLinkIssued'");
    expect(JSON.stringify(issued.rows)).not.toContain(token.split('.')[1]);
  });

  it('resets once with a valid link: sessions end, a lockout lifts, old links die; forged, used and expired links fail', async () => {
    const session = (await login(ANA.password)).body.data;
    const stale = await resetToken();
    const token = await resetToken();
    await t.request({ method: 'PUT', url: '/api/realm-settings', tenant: PLATFORM, token: await admin(), body: { section: 'bruteForce', data: { lockoutThreshold: 1 } } });
    expect((await login('wrong-Passw0rd')).status).toBe(423);

    const reset = (value: string, newPassword = 'Reset-Passw0rd') => post('/api/auth/reset-password', { token: value, newPassword });
    expect((await reset(token, 'weak')).status).toBe(400);
    expect((await reset(token, ANA.password)).body.error.message).toBe('Password must differ from the last 5 passwords');
    expect((await reset(token)).body).toEqual({ ok: true, data: { reset: true } });
    const used = await reset(token, 'Other-Passw0rd');
    expect([used.status, used.body.error.code]).toEqual([400, 'TOKEN_INVALID']);
    expect((await reset(stale, 'Other-Passw0rd')).body.error.code).toBe('TOKEN_INVALID');
    const forged = `${token.split('.')[0]}.${'A'.repeat(43)}`;
    expect((await reset(forged, 'Other-Passw0rd')).body.error.code).toBe('TOKEN_INVALID');
    expect((await reset('garbage', 'Other-Passw0rd')).body.error.code).toBe('TOKEN_INVALID');

    const refreshed = await post('/api/auth/token', { grant_type: 'refresh_token', refresh_token: session.refreshToken });
    expect(refreshed.body.error).toBe('invalid_grant');
    expect((await login('Reset-Passw0rd')).status).toBe(200);
    const changes = await t.db.pool.query<{ reason: string }>("select data->>'reason' as reason from events where type = 'UserPasswordChanged'");
    expect(changes.rows.map((r) => r.reason)).toEqual(['reset']);

    const late = await resetToken();
    clock.advance(1801_000);
    const expired = await reset(late, 'Later-Passw0rd');
    expect([expired.status, expired.body.error.code]).toEqual([400, 'TOKEN_EXPIRED']);
  });

  it('a magic link signs in once; a reused or expired one fails; a locked account keeps its link unspent', async () => {
    const verify = (token: string) => post('/api/auth/magic-link/verify', { token });
    const token = await magicToken();
    const signedIn = await verify(token);
    expect(signedIn.status).toBe(200);
    expect(signedIn.body.data).toMatchObject({ tokenType: 'Bearer', sessionId: expect.any(String) });
    const claims = JSON.parse(Buffer.from(signedIn.body.data.accessToken.split('.')[1], 'base64url').toString());
    expect(claims.amr).toEqual(['email']);
    expect((await verify(token)).body.error.code).toBe('TOKEN_INVALID');
    expect((await post('/api/auth/reset-password', { token: await magicToken(), newPassword: 'Magic-Passw0rd1' })).body.error.code).toBe('TOKEN_INVALID');

    const expiring = await magicToken();
    clock.advance(901_000);
    expect((await verify(expiring)).body.error.code).toBe('TOKEN_EXPIRED');

    const kept = await magicToken();
    expect((await login('wrong-Passw0rd')).status).toBe(423);
    expect((await verify(kept)).status).toBe(423);
    await t.request({ method: 'POST', url: `/api/users/${claims.sub}/unlock`, tenant: PLATFORM, token: await admin() });
    expect((await verify(kept)).status).toBe(200);
  });

  it('concurrent uses of one link: exactly one wins', async () => {
    const token = await magicToken();
    const answers = await Promise.all(Array.from({ length: 5 }, () => post('/api/auth/magic-link/verify', { token })));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 400, 400, 400, 400]);
  });

  /** A user of its own, and the token of the next e-mail of `subject` mailed to `email`. */
  const linkTo = async (url: string, subject: string, email: string) => {
    const before = smtp.messages.length;
    await post(url, { email });
    const mail = await smtp.waitForMessage((m) => smtp.messages.indexOf(m) >= before && m.subject === subject && m.to?.[0] === email);
    return new URL(/https?:\/\/\S+/.exec(mail.text!)![0]).searchParams.get('token')!;
  };
  const userOwn = async (email: string) => {
    const id = (await t.request({ method: 'POST', url: '/api/users', tenant: PLATFORM, token: await admin(), body: { email, password: 'Own-Passw0rd' } })).body.data.id;
    return async (body: object) => expect((await t.request({ method: 'PUT', url: `/api/users/${id}`, tenant: PLATFORM, token: await admin(), body })).status).toBe(200);
  };

  it('links mailed to the old address before the account changed its e-mail no longer work', async () => {
    const update = await userOwn('cai@p.test');
    // Whoever reads the old mailbox is no longer the account's owner.
    const magic = await linkTo('/api/auth/magic-link', 'Your sign-in link', 'cai@p.test');
    const reset = await linkTo('/api/auth/forgot-password', 'Reset your password', 'cai@p.test');
    await update({ email: 'cai.new@p.test' });
    expect((await post('/api/auth/magic-link/verify', { token: magic })).body.error?.code).toBe('TOKEN_INVALID');
    expect((await post('/api/auth/reset-password', { token: reset, newPassword: 'Taken-Over-Passw0rd1' })).body.error?.code).toBe('TOKEN_INVALID');
  });

  it('a reset link mailed before the account was disabled sets no password while it is disabled', async () => {
    const update = await userOwn('dia@p.test');
    const early = await linkTo('/api/auth/forgot-password', 'Reset your password', 'dia@p.test');
    await update({ enabled: false });
    const whileDisabled = await post('/api/auth/reset-password', { token: early, newPassword: 'Taken-Over-Passw0rd2' });
    expect([whileDisabled.status, whileDisabled.body.error?.code]).toEqual([400, 'TOKEN_INVALID']);
  });

  it('a reset leaves no session of the old password alive, not even one whose login was in flight during the reset', async () => {
    // Logins with the old password are spread over the reset's run; every one that answered 200 did
    // it with the password the reset replaces, so none of their sessions may outlive the reset.
    const survivors: string[] = [];
    for (let round = 0; round < 3; round += 1) {
      const email = `race${round}@p.test`;
      await t.request({ method: 'POST', url: '/api/users', tenant: PLATFORM, token: await admin(), body: { email, password: 'Old-Passw0rd' } });
      const token = await linkTo('/api/auth/forgot-password', 'Reset your password', email);
      const reset = post('/api/auth/reset-password', { token, newPassword: 'New-Passw0rd1' });
      const logins = await Promise.all(
        Array.from({ length: 9 }, async (_, i) => {
          await new Promise((resolve) => setTimeout(resolve, 20 + i * 15));
          const body = { email, password: 'Old-Passw0rd' };
          return t.request({ method: 'POST', url: '/api/auth/login', tenant: PLATFORM, body, remoteAddress: `10.7.${round}.${i}` });
        }),
      );
      expect((await reset).body).toEqual({ ok: true, data: { reset: true } });
      // A session whose login raced the reset is ended by the session-revocations reaction (docs/decisions.md).
      expect(await t.service.reactions.waitFor(await t.store.lastWrittenPosition(), 5000)).not.toBeNull();
      for (const [i, login] of logins.entries()) {
        if (login.status !== 200) continue;
        const body = { grant_type: 'refresh_token', refresh_token: login.body.data.refreshToken };
        const refreshed = await t.request({ method: 'POST', url: '/api/auth/token', body, remoteAddress: `10.6.${round}.${i}` });
        if (refreshed.status === 200) survivors.push(login.body.data.sessionId);
      }
    }
    expect(survivors).toEqual([]);
  });
});
