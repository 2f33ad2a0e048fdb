import { describe, expect, it } from 'vitest';
import { emailLinkDecider, linkStillCurrent } from '../../../src/modules/email-links/decider.ts';
import { emailLinkIssued, type EmailLinkEvent, type EmailLinkIssued } from '../../../src/modules/email-links/events.ts';
import { deciderSpec } from '../../support/decider-spec.ts';

const spec = deciderSpec(emailLinkDecider);
const link: EmailLinkIssued['data'] = {
  linkId: 'l1',
  userId: 'u1',
  purpose: 'magic_link',
  secretHash: 'h1',
  expiresAt: '2026-01-01T00:15:00.000Z',
  passwordVersion: 2,
  emailVersion: 1,
};
const issued: EmailLinkEvent = { type: 'EmailLinkIssued', data: link };
const now = '2026-01-01T00:05:00.000Z';

describe('email link decider', () => {
  it('records the versions of the account the link is mailed for, once', () => {
    spec.given([]).when({ type: 'IssueEmailLink', link }).then([issued]);
    spec.given([issued]).when({ type: 'IssueEmailLink', link }).thenThrows('CONFLICT');
  });

  it('spends a link once, with its secret and purpose, before it expires', () => {
    const used: EmailLinkEvent = { type: 'EmailLinkUsed', data: { linkId: 'l1', userId: 'u1', purpose: 'magic_link' } };
    spec.given([issued]).when({ type: 'UseEmailLink', presentedHash: 'h1', purpose: 'magic_link', now }).then([used]);
    spec.given([issued, used]).when({ type: 'UseEmailLink', presentedHash: 'h1', purpose: 'magic_link', now }).thenThrows('LINK_INVALID');
    spec.given([issued]).when({ type: 'UseEmailLink', presentedHash: 'h2', purpose: 'magic_link', now }).thenThrows('LINK_INVALID');
    spec.given([issued]).when({ type: 'UseEmailLink', presentedHash: 'h1', purpose: 'password_reset', now }).thenThrows('LINK_INVALID');
    spec.given([issued]).when({ type: 'UseEmailLink', presentedHash: 'h1', purpose: 'magic_link', now: link.expiresAt }).thenThrows('LINK_EXPIRED');
  });
});

describe('a link still speaks for its account', () => {
  const reset = { ...link, purpose: 'password_reset' as const };

  it('only while the account keeps the address it was mailed to', () => {
    for (const sent of [link, reset]) {
      expect(linkStillCurrent(sent, { passwordVersion: 2, emailVersion: 1 })).toBe(true);
      expect(linkStillCurrent(sent, { passwordVersion: 2, emailVersion: 2 })).toBe(false);
    }
  });

  it('a reset link only while the password is the one it was issued for; a magic link regardless', () => {
    expect(linkStillCurrent(reset, { passwordVersion: 3, emailVersion: 1 })).toBe(false);
    expect(linkStillCurrent(link, { passwordVersion: 3, emailVersion: 1 })).toBe(true);
  });

  it('a link stored before emailVersion was recorded: only while the address never changed', () => {
    const { emailVersion: _, ...legacy } = reset;
    expect(emailLinkIssued.data.safeParse(legacy).success).toBe(true);
    expect(linkStillCurrent(legacy, { passwordVersion: 2, emailVersion: 0 })).toBe(true);
    expect(linkStillCurrent(legacy, { passwordVersion: 2, emailVersion: 1 })).toBe(false);
    expect(linkStillCurrent({ ...legacy, purpose: 'magic_link' }, { passwordVersion: 2, emailVersion: 1 })).toBe(false);
  });
});
