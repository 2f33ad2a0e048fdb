import { z } from 'zod';
import { defineEvent, type EventOf } from '../../platform/events/define-event.ts';

export const EMAIL_LINK_PURPOSES = ['password_reset', 'magic_link'] as const;
export type EmailLinkPurpose = (typeof EMAIL_LINK_PURPOSES)[number];

export const emailLinkIssued = defineEvent({
  type: 'EmailLinkIssued',
  description:
    'A single-use link sent by e-mail. Only the SHA-256 of its secret is recorded; passwordVersion ties a reset link to the password it was issued for, so any later change voids it; emailVersion ties every link to the address it was mailed to, so any later e-mail change voids it (absent on links issued before it was recorded: those count as version 0, so they work only while the address has never changed).',
  data: z.strictObject({
    linkId: z.string(),
    userId: z.string(),
    purpose: z.enum(EMAIL_LINK_PURPOSES),
    secretHash: z.string(),
    expiresAt: z.string(),
    passwordVersion: z.number().int(),
    emailVersion: z.number().int().optional(),
  }),
  sensitive: ['secretHash'],
});
export const emailLinkUsed = defineEvent({
  type: 'EmailLinkUsed',
  data: z.strictObject({ linkId: z.string(), userId: z.string(), purpose: z.enum(EMAIL_LINK_PURPOSES) }),
});

export const emailLinkEvents = [emailLinkIssued, emailLinkUsed];

export type EmailLinkIssued = EventOf<typeof emailLinkIssued>;
export type EmailLinkUsed = EventOf<typeof emailLinkUsed>;
export type EmailLinkEvent = EventOf<(typeof emailLinkEvents)[number]>;

export const emailLinkStreamId = (tenant: string, linkId: string): string => `emaillink-${tenant}.${linkId}`;

/** How long a link works: short, because e-mail is not a safe place to keep a credential. */
export const EMAIL_LINK_LIFETIME_SECONDS: Record<EmailLinkPurpose, number> = { password_reset: 1800, magic_link: 900 };
