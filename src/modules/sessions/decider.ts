import type { Decider } from '../../platform/commands/decider.ts';
import { sessionError } from './errors.ts';
import type { SessionEvent, SessionRevokeReason, SessionStarted } from './events.ts';

export type SessionState =
  | { status: 'absent' }
  | {
      status: 'active' | 'revoked' | 'expired';
      session: SessionStarted['data'];
      currentHash: string;
      refreshExpiresAt: string;
      /** Hashes of refresh tokens already exchanged: presenting one again means theft. */
      retiredHashes: RetiredHashes;
      lastUsedAt: string;
    };

/**
 * The exchanged hashes as a list that shares its tail: a refresh adds one in constant time (the
 * folded state of a long session is not copied at each refresh), and only a token that is not the
 * current one is looked for in it.
 */
export type RetiredHashes = { readonly hash: string; readonly earlier: RetiredHashes } | null;

function wasRetired(retired: RetiredHashes, hash: string): boolean {
  for (let node = retired; node; node = node.earlier) if (node.hash === hash) return true;
  return false;
}

export type SessionCommand =
  | { type: 'RefreshSession'; presentedHash: string; newHash: string; now: string }
  | { type: 'RevokeSession'; reason: SessionRevokeReason }
  | { type: 'ExpireSession'; now: string }
  | { type: 'UseSession'; now: string };

export const invalidGrant = (description: string) => sessionError('invalid_grant', description);

/** When and why an active session ends by time (lifetime or idle limit), whichever comes first. */
export function sessionEnd(state: Exclude<SessionState, { status: 'absent' }>): { at: Date; reason: 'idle' | 'lifetime' } {
  const lifetime = new Date(state.session.expiresAt);
  const idle = new Date(new Date(state.lastUsedAt).getTime() + state.session.idleTimeoutSeconds * 1000);
  return idle < lifetime ? { at: idle, reason: 'idle' } : { at: lifetime, reason: 'lifetime' };
}

/** Why a session no longer accepts its refresh token at `now`, or null while it does. */
export function expiry(state: Exclude<SessionState, { status: 'absent' }>, now: Date): string | null {
  const end = sessionEnd(state);
  if (now >= end.at) return end.reason === 'lifetime' ? 'The session has reached its maximum lifetime' : 'The session has been idle too long';
  if (now >= new Date(state.refreshExpiresAt)) return 'The refresh token has expired';
  return null;
}

export const sessionDecider: Decider<SessionState, SessionCommand, SessionEvent> = {
  initialState: () => ({ status: 'absent' }),

  evolve(state, event) {
    switch (event.type) {
      case 'SessionStarted':
        return {
          status: 'active',
          session: event.data,
          currentHash: event.data.refreshTokenHash,
          refreshExpiresAt: event.data.refreshExpiresAt,
          retiredHashes: null,
          lastUsedAt: event.data.startedAt,
        };
      case 'SessionRefreshed':
        if (state.status === 'absent') return state;
        return {
          ...state,
          currentHash: event.data.refreshTokenHash,
          refreshExpiresAt: event.data.refreshExpiresAt,
          retiredHashes: { hash: state.currentHash, earlier: state.retiredHashes },
          lastUsedAt: event.data.refreshedAt,
        };
      case 'SessionRevoked':
        return state.status === 'absent' ? state : { ...state, status: 'revoked' };
      case 'SessionExpired':
        return state.status === 'absent' ? state : { ...state, status: 'expired' };
      case 'SessionUsed':
        return state.status === 'absent' ? state : { ...state, lastUsedAt: event.data.usedAt };
      default: {
        const exhaustive: never = event;
        return exhaustive;
      }
    }
  },

  decide(command, state) {
    switch (command.type) {
      case 'RevokeSession':
        if (state.status !== 'active') return [];
        return [{ type: 'SessionRevoked', data: { sessionId: state.session.sessionId, userId: state.session.userId, reason: command.reason } }];
      case 'ExpireSession': {
        if (state.status !== 'active') return [];
        const end = sessionEnd(state);
        if (end.at > new Date(command.now)) return [];
        const { sessionId, userId } = state.session;
        return [{ type: 'SessionExpired', data: { sessionId, userId, reason: end.reason, expiredAt: end.at.toISOString() } }];
      }
      case 'UseSession':
        // A session already over its limits stays ended: activity cannot revive it.
        if (state.status !== 'active' || sessionEnd(state).at <= new Date(command.now)) return [];
        return [{ type: 'SessionUsed', data: { sessionId: state.session.sessionId, usedAt: command.now } }];
      case 'RefreshSession': {
        if (state.status === 'absent') throw invalidGrant('Unknown refresh token');
        const { sessionId, userId } = state.session;
        // The current hash is never a retired one (each is new randomness), so the usual case looks no further.
        if (command.presentedHash !== state.currentHash && wasRetired(state.retiredHashes, command.presentedHash)) {
          // Reuse of an exchanged token: whoever holds the chain may be an attacker. End the session.
          return state.status === 'active' ? [{ type: 'SessionRevoked', data: { sessionId, userId, reason: 'refresh_token_reuse' } }] : [];
        }
        if (state.status !== 'active' || command.presentedHash !== state.currentHash) throw invalidGrant('The refresh token is not valid');
        const expired = expiry(state, new Date(command.now));
        if (expired) throw invalidGrant(expired);
        const lifetime = state.session.refreshTokenLifetimeSeconds * 1000;
        const refreshExpiresAt = new Date(new Date(command.now).getTime() + lifetime).toISOString();
        return [{ type: 'SessionRefreshed', data: { sessionId, refreshedAt: command.now, refreshTokenHash: command.newHash, refreshExpiresAt } }];
      }
      default: {
        const exhaustive: never = command;
        return exhaustive;
      }
    }
  },
};
