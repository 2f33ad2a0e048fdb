import type { Decider } from '../../platform/commands/decider.ts';
import { safeEqual } from '../../platform/crypto/secret-box.ts';
import { conflict } from '../../platform/errors.ts';
import { linkError } from './errors.ts';
import type { EmailLinkEvent, EmailLinkIssued, EmailLinkPurpose } from './events.ts';

export type EmailLinkState = { status: 'absent' } | { status: 'issued' | 'used'; link: EmailLinkIssued['data'] };

export type EmailLinkCommand =
  | { type: 'IssueEmailLink'; link: EmailLinkIssued['data'] }
  | { type: 'UseEmailLink'; presentedHash: string; purpose: EmailLinkPurpose; now: string };

/** One answer for unknown, forged, used or mismatched links: none of them tells an attacker more. */
export const invalidLink = () => linkError('LINK_INVALID', 'The link is invalid or has already been used');

/** The account's versions a link is checked against when it is used (the user's current state). */
export interface LinkAccount {
  passwordVersion: number;
  emailVersion: number;
}

/**
 * Whether a link still speaks for its account: it was mailed to the current address (no e-mail
 * change since it was issued) and, for a reset link, issued for the current password. A link
 * recorded without emailVersion (issued before it was recorded) counts as mailed at version 0, so
 * it survives only if the address never changed: never accepted wrongly, at worst refused.
 * A link that fails is answered as an invalid one.
 */
export function linkStillCurrent(link: EmailLinkIssued['data'], account: LinkAccount): boolean {
  if ((link.emailVersion ?? 0) !== account.emailVersion) return false;
  return link.purpose !== 'password_reset' || link.passwordVersion === account.passwordVersion;
}

export const emailLinkDecider: Decider<EmailLinkState, EmailLinkCommand, EmailLinkEvent> = {
  initialState: () => ({ status: 'absent' }),

  evolve(state, event) {
    switch (event.type) {
      case 'EmailLinkIssued':
        return { status: 'issued', link: event.data };
      case 'EmailLinkUsed':
        return state.status === 'absent' ? state : { ...state, status: 'used' };
      default: {
        const exhaustive: never = event;
        return exhaustive;
      }
    }
  },

  decide(command, state) {
    switch (command.type) {
      case 'IssueEmailLink':
        if (state.status !== 'absent') throw conflict('Link already issued');
        return [{ type: 'EmailLinkIssued', data: command.link }];
      case 'UseEmailLink': {
        if (state.status !== 'issued' || state.link.purpose !== command.purpose || !safeEqual(state.link.secretHash, command.presentedHash)) {
          throw invalidLink();
        }
        if (new Date(command.now) >= new Date(state.link.expiresAt)) throw linkError('LINK_EXPIRED', 'The link has expired');
        const { linkId, userId, purpose } = state.link;
        return [{ type: 'EmailLinkUsed', data: { linkId, userId, purpose } }];
      }
      default: {
        const exhaustive: never = command;
        return exhaustive;
      }
    }
  },
};
