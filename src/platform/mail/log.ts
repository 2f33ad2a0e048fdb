import type { Logger } from 'pino';
import type { Mailer } from './port.ts';

/**
 * Without SMTP_URL messages go to the log (decisions.md, Running): recipient and subject at info,
 * the text, which may hold a sign-in or reset link, only at debug.
 */
export function logMailer(logger: Logger): Mailer {
  return {
    async send({ to, subject, text }) {
      logger.info({ to, subject }, 'e-mail logged, not sent (SMTP_URL is unset)');
      logger.debug({ to, subject, text }, 'e-mail text');
    },
    async close() {},
  };
}
