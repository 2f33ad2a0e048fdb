import type { Logger } from 'pino';
import type { Config } from '../../config.ts';
import { logMailer } from './log.ts';
import type { Mailer } from './port.ts';
import { smtpMailer } from './smtp.ts';

/** SMTP when SMTP_URL is set (sender SMTP_FROM); otherwise the log. */
export function openMailer(config: Pick<Config, 'SMTP_URL' | 'SMTP_FROM'>, logger: Logger): Mailer {
  if (config.SMTP_URL) return smtpMailer(config.SMTP_URL, config.SMTP_FROM);
  logger.warn('SMTP_URL is unset: e-mails (sign-in links, password resets) are written to the log, not sent');
  return logMailer(logger.child({ component: 'mail' }));
}
