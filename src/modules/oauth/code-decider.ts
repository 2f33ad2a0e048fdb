import type { Decider } from '../../platform/commands/decider.ts';
import { invalidGrant } from '../sessions/index.ts';
import type { AuthorizationCodeEvent, IssuedCode } from './code-events.ts';

export type CodeState = { status: 'absent' } | { status: 'issued' | 'redeemed' | 'replayed'; code: IssuedCode };

export type CodeCommand =
  | { type: 'IssueCode'; code: IssuedCode }
  /** `verifierChallenge`: S256 of the presented code_verifier, null when none was sent. */
  | { type: 'RedeemCode'; presentedHash: string; clientId: string; redirectUri: string | null; verifierChallenge: string | null; now: string };

const refused = () => invalidGrant('The authorization code is invalid, expired or already used');

export const codeDecider: Decider<CodeState, CodeCommand, AuthorizationCodeEvent> = {
  initialState: () => ({ status: 'absent' }),

  evolve(state, event) {
    switch (event.type) {
      case 'AuthorizationCodeIssued':
        return { status: 'issued', code: event.data };
      case 'AuthorizationCodeRedeemed':
        return state.status === 'absent' ? state : { ...state, status: 'redeemed' };
      case 'AuthorizationCodeReplayed':
        return state.status === 'absent' ? state : { ...state, status: 'replayed' };
      case 'ClientSessionBound':
        return state; // a device's session: no code to redeem
      default: {
        const exhaustive: never = event;
        return exhaustive;
      }
    }
  },

  decide(command, state) {
    if (command.type === 'IssueCode') {
      if (state.status !== 'absent') throw new Error('A session has one authorization code');
      return [{ type: 'AuthorizationCodeIssued', data: command.code }];
    }
    if (state.status === 'absent' || state.code.codeHash !== command.presentedHash) throw refused();
    const { code } = state;
    const ids = { sessionId: code.sessionId, clientId: code.clientId };
    // A second presentation of the genuine code: someone else holds it (RFC 6749 4.1.2, RFC 9700 4.5). Recorded once.
    if (state.status === 'redeemed') return [{ type: 'AuthorizationCodeReplayed', data: ids }];
    if (state.status === 'replayed') throw refused();
    if (command.now >= code.expiresAt || command.clientId !== code.clientId) throw refused();
    // Exact match (RFC 6749 4.1.3), required whenever the authorization request carried one (it always does here).
    if (command.redirectUri !== code.redirectUri) throw invalidGrant('redirect_uri does not match the authorization request');
    // PKCE (RFC 7636 4.6); a verifier without a challenge is a downgrade attempt (RFC 9700 2.1.1).
    if (code.codeChallenge !== command.verifierChallenge) throw invalidGrant('code_verifier does not match the code_challenge');
    return [{ type: 'AuthorizationCodeRedeemed', data: ids }];
  },
};
