import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openMailer } from '../../../src/platform/mail/open.ts';
import type { Mailer } from '../../../src/platform/mail/port.ts';
import { smtpMailer } from '../../../src/platform/mail/smtp.ts';
import { SMTP_USER, startSmtpServer, type TestSmtpServer } from '../../support/smtp-server.ts';

describe('SMTP mailer', () => {
  let smtp: TestSmtpServer;
  let mailer: Mailer;
  beforeAll(async () => {
    smtp = await startSmtpServer();
    mailer = smtpMailer(smtp.url, 'IAM <no-reply@iam.test>');
  });
  afterAll(async () => {
    await mailer.close();
    await smtp.close();
  });

  it('delivers recipient, sender, subject and text, authenticated with the credentials of the URL', async () => {
    await mailer.send({ to: 'ada@example.test', subject: 'Welcome', text: 'Hello Ada.\nYour account is ready.' });
    const mail = await smtp.waitForMessage((m) => m.to.includes('ada@example.test'));
    expect(mail).toMatchObject({ from: 'no-reply@iam.test', subject: 'Welcome', text: 'Hello Ada.\nYour account is ready.', html: null, authenticatedAs: SMTP_USER });
    expect(mail.headers.get('from')).toBe('IAM <no-reply@iam.test>');
    expect(mail.headers.get('to')).toBe('ada@example.test');
  });

  it('keeps a long link intact, with non-ASCII text and subject and an HTML alternative', async () => {
    const link = `https://iam.example.test/reset-password?tenant=acme&token=${'aZ09-_'.repeat(40)}&redirect=${encodeURIComponent('https://app.example.test/après?x=1')}`;
    await mailer.send({
      to: 'grace@example.test',
      subject: 'Réinitialisez votre mot de passe — Ünïcode',
      text: `Bonjour Grâce,\n\nOuvrez ce lien : ${link}\n\nÀ bientôt.`,
      html: `<p>Ouvrez <a href="${link}">ce lien</a>.</p>`,
    });
    const mail = await smtp.waitForMessage((m) => m.to.includes('grace@example.test'));
    expect(mail.raw).not.toContain(link); // it really went through a transfer encoding (long lines, non-ASCII)
    expect(mail.subject).toBe('Réinitialisez votre mot de passe — Ünïcode');
    expect(mail.text).toBe(`Bonjour Grâce,\n\nOuvrez ce lien : ${link}\n\nÀ bientôt.`);
    expect(mail.html).toBe(`<p>Ouvrez <a href="${link}">ce lien</a>.</p>`);
  });

  it('decodes base64 bodies and subjects (mostly non-Latin text)', async () => {
    const text = 'Здравствуйте, Ада! Ваша ссылка для входа: https://iam.example.test/magic?token=Abc123';
    await mailer.send({ to: 'cyrillic@example.test', subject: 'Ссылка для входа', text });
    const mail = await smtp.waitForMessage((m) => m.to.includes('cyrillic@example.test'));
    expect(mail.headers.get('content-transfer-encoding')).toBe('base64');
    expect([mail.subject, mail.text]).toEqual(['Ссылка для входа', text]);
  });

  it('waits for a message that arrives later, and times out naming what arrived', async () => {
    const later = smtp.waitForMessage((m) => m.subject === 'Later', 5000);
    await mailer.send({ to: 'later@example.test', subject: 'Later', text: 'x' });
    expect((await later).to).toEqual(['later@example.test']);
    await expect(smtp.waitForMessage((m) => m.subject === 'Never', 100)).rejects.toThrow(/no matching e-mail within 100 ms; received: .*Later/);
  });

  it('refuses wrong credentials', async () => {
    const wrong = smtpMailer(smtp.url.replace(/:[^:@/]+@/, ':wrong@'), 'IAM <no-reply@iam.test>');
    await expect(wrong.send({ to: 'x@example.test', subject: 'x', text: 'x' })).rejects.toThrow(/Invalid username or password/);
    await wrong.close();
  });

  it('closes its pooled connections on close()', async () => {
    const pooled = smtpMailer(smtp.url, 'IAM <no-reply@iam.test>');
    await pooled.send({ to: 'pool@example.test', subject: 'Pooled', text: 'x' });
    const before = smtp.openConnections();
    await pooled.close();
    await expect.poll(() => smtp.openConnections()).toBe(before - 1);
  });

  it('openMailer sends through SMTP when SMTP_URL is set', async () => {
    const opened = openMailer({ smtpUrl: smtp.url, from: 'Opened <opened@iam.test>' }, pino({ level: 'silent' }));
    await opened.send({ to: 'opened@example.test', subject: 'Opened', text: 'x' });
    expect((await smtp.waitForMessage((m) => m.subject === 'Opened')).from).toBe('opened@iam.test');
    await opened.close();
  });
});
