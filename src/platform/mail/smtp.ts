import { createTransport } from 'nodemailer';
import type { Mailer } from './port.ts';

/**
 * Sends through the SMTP server of `url` (smtp:// or smtps://, credentials in the URL, further
 * nodemailer options as query parameters) from `from`, over a pool of reused connections.
 */
export function smtpMailer(url: string, from: string): Mailer {
  const transport = createTransport(
    {
      url,
      pool: true,
      // A server that stops answering must not hold a send (and its background task) for minutes.
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 30_000,
    },
    { from },
  );
  return {
    async send({ to, subject, text, html }) {
      await transport.sendMail({ to, subject, text, ...(html ? { html } : {}) });
    },
    async close() {
      transport.close();
    },
  };
}
