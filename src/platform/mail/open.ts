import type { Logger } from 'pino';
import { logMailer } from './log.ts';
import type { Mailer } from './port.ts';
import { smtpMailer } from './smtp.ts';

/** SMTP when a server URL is given (sender `from`); otherwise the log. */
export function openMailer(settings: { smtpUrl?: string; from: string }, logger: Logger): Mailer {
  if (settings.smtpUrl) return smtpMailer(settings.smtpUrl, settings.from);
  logger.warn('SMTP_URL is unset: e-mails (sign-in links, password resets) are written to the log, not sent');
  return logMailer(logger.child({ component: 'mail' }));
}
