import type { Decider } from '../../platform/commands/decider.ts';
import { sessionError } from './errors.ts';
import type { SessionEvent, SessionRevokeReason, SessionStarted } from './events.ts';

export type SessionState =
  | { status: 'absent' }
  | {
      status: 'active' | 'revoked' | 'expired';
      session: SessionStarted['data'];
      currentHash: string;
      /** Hashes of refresh tokens already exchanged: presenting one again means theft. */
      retiredHashes: RetiredHashes;
      /**
       * When the current refresh token expires, and when the idle limit passes (the last refresh or
       * use plus the idle timeout), in ms since the epoch: parsed once per event, compared at every
       * refresh without building dates.
       */
      refreshExpiresAt: number;
      idleEndsAt: number;
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

type Live = Exclude<SessionState, { status: 'absent' }>;

/** When (ms since the epoch) and why an active session ends by time (lifetime or idle limit), whichever comes first. */
function endOf(state: Live): { at: number; reason: 'idle' | 'lifetime' } {
  const lifetime = Date.parse(state.session.expiresAt);
  return state.idleEndsAt < lifetime ? { at: state.idleEndsAt, reason: 'idle' } : { at: lifetime, reason: 'lifetime' };
}

/** Why a session no longer accepts its refresh token at `now` (ms since the epoch), or null while it does. */
function expiry(state: Live, now: number): string | null {
  const end = endOf(state);
  if (now >= end.at) return end.reason === 'lifetime' ? 'The session has reached its maximum lifetime' : 'The session has been idle too long';
  if (now >= state.refreshExpiresAt) return 'The refresh token has expired';
  return null;
}

/** The idle limit after activity at `at` (an ISO time). */
const idleEnd = (session: SessionStarted['data'], at: string): number => Date.parse(at) + session.idleTimeoutSeconds * 1000;

export const sessionDecider: Decider<SessionState, SessionCommand, SessionEvent> = {
  initialState: () => ({ status: 'absent' }),

  evolve(state, event) {
    switch (event.type) {
      case 'SessionStarted':
        return {
          status: 'active',
          session: event.data,
          currentHash: event.data.refreshTokenHash,
          retiredHashes: null,
          refreshExpiresAt: Date.parse(event.data.refreshExpiresAt),
          idleEndsAt: idleEnd(event.data, event.data.startedAt),
        };
      case 'SessionRefreshed':
        if (state.status === 'absent') return state;
        return {
          status: state.status,
          session: state.session,
          currentHash: event.data.refreshTokenHash,
          retiredHashes: { hash: state.currentHash, earlier: state.retiredHashes },
          refreshExpiresAt: Date.parse(event.data.refreshExpiresAt),
          idleEndsAt: idleEnd(state.session, event.data.refreshedAt),
        };
      case 'SessionRevoked':
        return state.status === 'absent' ? state : { ...state, status: 'revoked' };
      case 'SessionExpired':
        return state.status === 'absent' ? state : { ...state, status: 'expired' };
      case 'SessionUsed':
        return state.status === 'absent' ? state : { ...state, idleEndsAt: idleEnd(state.session, event.data.usedAt) };
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
        const end = endOf(state);
        if (end.at > Date.parse(command.now)) return [];
        const { sessionId, userId } = state.session;
        return [{ type: 'SessionExpired', data: { sessionId, userId, reason: end.reason, expiredAt: new Date(end.at).toISOString() } }];
      }
      case 'UseSession':
        // A session already over its limits stays ended: activity cannot revive it.
        if (state.status !== 'active' || endOf(state).at <= Date.parse(command.now)) return [];
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
        const now = Date.parse(command.now);
        const expired = expiry(state, now);
        if (expired) throw invalidGrant(expired);
        const refreshExpiresAt = new Date(now + state.session.refreshTokenLifetimeSeconds * 1000).toISOString();
        return [{ type: 'SessionRefreshed', data: { sessionId, refreshedAt: command.now, refreshTokenHash: command.newHash, refreshExpiresAt } }];
      }
      default: {
        const exhaustive: never = command;
        return exhaustive;
      }
    }
  },
};
