import type { DomainEvent } from '../../platform/commands/decider.ts';

export type EmailLinkPurpose = 'password_reset' | 'magic_link';

/**
 * A single-use link sent by e-mail. Only the SHA-256 of its secret is recorded; `passwordVersion`
 * ties a reset link to the password it was issued for, so any later change voids it.
 */
export type EmailLinkIssued = DomainEvent<
  'EmailLinkIssued',
  { linkId: string; userId: string; purpose: EmailLinkPurpose; secretHash: string; expiresAt: string; passwordVersion: number }
>;
export type EmailLinkUsed = DomainEvent<'EmailLinkUsed', { linkId: string; userId: string; purpose: EmailLinkPurpose }>;

export type EmailLinkEvent = EmailLinkIssued | EmailLinkUsed;

export const emailLinkStreamId = (tenant: string, linkId: string): string => `emaillink-${tenant}.${linkId}`;

/** How long a link works: short, because e-mail is not a safe place to keep a credential. */
export const EMAIL_LINK_LIFETIME_SECONDS: Record<EmailLinkPurpose, number> = { password_reset: 1800, magic_link: 900 };
