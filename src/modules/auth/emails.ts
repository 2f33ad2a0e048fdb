import { EMAIL_LINK_LIFETIME_SECONDS, type EmailLinkPurpose } from '../email-links/index.ts';
import type { MailMessage } from '../../platform/mail/port.ts';

const COPY: Record<EmailLinkPurpose, { subject: string; page: string; action: string }> = {
  password_reset: { subject: 'Reset your password', page: 'reset-password', action: 'choose a new password' },
  magic_link: { subject: 'Your sign-in link', page: 'magic-link', action: 'sign in' },
};

/**
 * The e-mail carrying a single-use link. The link opens a page of IAM_PUBLIC_URL, which posts the
 * token to the API: a GET that consumed it would be spent by mail scanners that prefetch links.
 */
export function linkEmail(purpose: EmailLinkPurpose, input: { to: string; publicUrl: string; tenant: string; token: string; tenantName: string }): MailMessage {
  const copy = COPY[purpose];
  const url = new URL(copy.page, input.publicUrl.endsWith('/') ? input.publicUrl : `${input.publicUrl}/`);
  url.searchParams.set('tenant', input.tenant);
  url.searchParams.set('token', input.token);
  const text = [
    `Hello,`,
    ``,
    `Use this link to ${copy.action} at ${input.tenantName}:`,
    url.toString(),
    ``,
    `It works once and expires in ${EMAIL_LINK_LIFETIME_SECONDS[purpose] / 60} minutes. If you did not ask for it, ignore this e-mail.`,
  ].join('\n');
  return { to: input.to, subject: copy.subject, text };
}
