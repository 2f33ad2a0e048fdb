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
