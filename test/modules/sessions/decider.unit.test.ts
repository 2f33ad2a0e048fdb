import { describe, it } from 'vitest';
import { sessionDecider } from '../../../src/modules/sessions/decider.ts';
import type { SessionEvent } from '../../../src/modules/sessions/events.ts';
import { deciderSpec } from '../../support/decider-spec.ts';

const spec = deciderSpec(sessionDecider);
const started: SessionEvent = {
  type: 'SessionStarted',
  data: {
    sessionId: 's1', userId: 'u1', startedAt: '2026-01-01T00:00:00.000Z', refreshTokenHash: 'h1', refreshExpiresAt: '2026-01-08T00:00:00.000Z',
    ipAddress: null, userAgent: null, expiresAt: '2026-01-02T00:00:00.000Z', idleTimeoutSeconds: 3600, refreshTokenLifetimeSeconds: 604800, acr: 'aal1', amr: ['pwd'],
  },
};
const refreshed: SessionEvent = { type: 'SessionRefreshed', data: { sessionId: 's1', refreshedAt: '2026-01-01T00:30:00.000Z', refreshTokenHash: 'h2', refreshExpiresAt: '2026-01-08T00:30:00.000Z' } };

describe('session decider', () => {
  it('rotates the refresh token when the current one is presented in time', () => {
    spec.given([started]).when({ type: 'RefreshSession', presentedHash: 'h1', newHash: 'h2', now: '2026-01-01T00:30:00.000Z' }).then([refreshed]);
  });
  it('revokes the session when an exchanged token is presented again', () => {
    spec.given([started, refreshed]).when({ type: 'RefreshSession', presentedHash: 'h1', newHash: 'h3', now: '2026-01-01T00:40:00.000Z' }).then([
      { type: 'SessionRevoked', data: { sessionId: 's1', userId: 'u1', reason: 'refresh_token_reuse' } },
    ]);
  });
  it('detects the reuse of any exchanged token of a long chain, and revokes only an active session', () => {
    const chain: SessionEvent[] = [started];
    for (let n = 2; n <= 6; n++) {
      chain.push({ type: 'SessionRefreshed', data: { sessionId: 's1', refreshedAt: `2026-01-01T00:0${n}:00.000Z`, refreshTokenHash: `h${n}`, refreshExpiresAt: '2026-01-08T00:30:00.000Z' } });
    }
    const reuse = { type: 'SessionRevoked' as const, data: { sessionId: 's1', userId: 'u1', reason: 'refresh_token_reuse' as const } };
    for (const old of ['h1', 'h3', 'h5']) {
      spec.given(chain).when({ type: 'RefreshSession', presentedHash: old, newHash: 'h7', now: '2026-01-01T00:10:00.000Z' }).then([reuse]);
      spec.given([...chain, reuse]).when({ type: 'RefreshSession', presentedHash: old, newHash: 'h7', now: '2026-01-01T00:10:00.000Z' }).then([]);
    }
    spec.given(chain).when({ type: 'RefreshSession', presentedHash: 'h6', newHash: 'h7', now: '2026-01-01T00:10:00.000Z' }).then([
      { type: 'SessionRefreshed', data: { sessionId: 's1', refreshedAt: '2026-01-01T00:10:00.000Z', refreshTokenHash: 'h7', refreshExpiresAt: '2026-01-08T00:10:00.000Z' } },
    ]);
    spec.given([...chain, reuse]).when({ type: 'RefreshSession', presentedHash: 'h6', newHash: 'h7', now: '2026-01-01T00:10:00.000Z' }).thenThrows('invalid_grant');
  });
  it('refuses unknown, idle, over-lifetime and revoked sessions', () => {
    spec.given([]).when({ type: 'RefreshSession', presentedHash: 'h1', newHash: 'h2', now: '2026-01-01T00:10:00.000Z' }).thenThrows('invalid_grant');
    spec.given([started]).when({ type: 'RefreshSession', presentedHash: 'hx', newHash: 'h2', now: '2026-01-01T00:10:00.000Z' }).thenThrows('invalid_grant');
    spec.given([started]).when({ type: 'RefreshSession', presentedHash: 'h1', newHash: 'h2', now: '2026-01-01T01:00:00.000Z' }).thenThrows('invalid_grant');
    spec.given([started, refreshed]).when({ type: 'RefreshSession', presentedHash: 'h2', newHash: 'h3', now: '2026-01-02T00:00:00.000Z' }).thenThrows('invalid_grant');
    // A refresh token that expires before the session's limits: refused at its expiry, and a rotation gives the new one its lifetime.
    const shortLived: SessionEvent = { ...started, data: { ...started.data, refreshExpiresAt: '2026-01-01T00:20:00.000Z', refreshTokenLifetimeSeconds: 1200 } };
    spec.given([shortLived]).when({ type: 'RefreshSession', presentedHash: 'h1', newHash: 'h2', now: '2026-01-01T00:20:00.000Z' }).thenThrows('invalid_grant');
    spec.given([shortLived]).when({ type: 'RefreshSession', presentedHash: 'h1', newHash: 'h2', now: '2026-01-01T00:19:00.000Z' }).then([
      { type: 'SessionRefreshed', data: { sessionId: 's1', refreshedAt: '2026-01-01T00:19:00.000Z', refreshTokenHash: 'h2', refreshExpiresAt: '2026-01-01T00:39:00.000Z' } },
    ]);
    const rotated: SessionEvent = { type: 'SessionRefreshed', data: { sessionId: 's1', refreshedAt: '2026-01-01T00:19:00.000Z', refreshTokenHash: 'h2', refreshExpiresAt: '2026-01-01T00:39:00.000Z' } };
    spec.given([shortLived, rotated]).when({ type: 'RefreshSession', presentedHash: 'h2', newHash: 'h3', now: '2026-01-01T00:38:00.000Z' }).then([
      { type: 'SessionRefreshed', data: { sessionId: 's1', refreshedAt: '2026-01-01T00:38:00.000Z', refreshTokenHash: 'h3', refreshExpiresAt: '2026-01-01T00:58:00.000Z' } },
    ]);
    spec.given([shortLived, rotated]).when({ type: 'RefreshSession', presentedHash: 'h2', newHash: 'h3', now: '2026-01-01T00:39:00.000Z' }).thenThrows('invalid_grant');
    const revoked: SessionEvent = { type: 'SessionRevoked', data: { sessionId: 's1', userId: 'u1', reason: 'logout' } };
    spec.given([started, revoked]).when({ type: 'RefreshSession', presentedHash: 'h1', newHash: 'h2', now: '2026-01-01T00:10:00.000Z' }).thenThrows('invalid_grant');
  });
  it('revokes once; revoking again changes nothing', () => {
    spec.given([started]).when({ type: 'RevokeSession', reason: 'admin' }).then([{ type: 'SessionRevoked', data: { sessionId: 's1', userId: 'u1', reason: 'admin' } }]);
    spec.given([started, { type: 'SessionRevoked', data: { sessionId: 's1', userId: 'u1', reason: 'admin' } }]).when({ type: 'RevokeSession', reason: 'admin' }).then([]);
    const userDeleted: SessionEvent = { type: 'SessionRevoked', data: { sessionId: 's1', userId: 'u1', reason: 'user_deleted' } };
    spec.given([started]).when({ type: 'RevokeSession', reason: 'user_deleted' }).then([userDeleted]);
    spec.given([started, userDeleted]).when({ type: 'RevokeSession', reason: 'user_deleted' }).then([]);
  });
  it('expires by the idle limit or the lifetime, whichever comes first, once', () => {
    const at = (iso: string) => ({ type: 'ExpireSession' as const, now: iso });
    spec.given([started]).when(at('2026-01-01T00:59:59.000Z')).then([]);
    spec.given([started]).when(at('2026-01-01T01:00:00.000Z')).then([
      { type: 'SessionExpired', data: { sessionId: 's1', userId: 'u1', reason: 'idle', expiredAt: '2026-01-01T01:00:00.000Z' } },
    ]);
    const busy: SessionEvent[] = [started, { ...refreshed, data: { ...refreshed.data, refreshedAt: '2026-01-01T23:30:00.000Z' } }];
    spec.given(busy).when(at('2026-01-02T00:10:00.000Z')).then([
      { type: 'SessionExpired', data: { sessionId: 's1', userId: 'u1', reason: 'lifetime', expiredAt: '2026-01-02T00:00:00.000Z' } },
    ]);
    const expired: SessionEvent = { type: 'SessionExpired', data: { sessionId: 's1', userId: 'u1', reason: 'idle', expiredAt: '2026-01-01T01:00:00.000Z' } };
    spec.given([started, expired]).when(at('2026-01-03T00:00:00.000Z')).then([]);
    spec.given([started, expired]).when({ type: 'RevokeSession', reason: 'admin' }).then([]);
  });
  it('records use only while the session is active, and use moves the idle limit', () => {
    const used: SessionEvent = { type: 'SessionUsed', data: { sessionId: 's1', usedAt: '2026-01-01T00:50:00.000Z' } };
    spec.given([started]).when({ type: 'UseSession', now: '2026-01-01T00:50:00.000Z' }).then([used]);
    spec.given([started]).when({ type: 'UseSession', now: '2026-01-01T01:00:00.000Z' }).then([]);
    spec.given([started, used]).when({ type: 'ExpireSession', now: '2026-01-01T01:10:00.000Z' }).then([]);
    spec.given([started, { type: 'SessionRevoked', data: { sessionId: 's1', userId: 'u1', reason: 'admin' } }]).when({ type: 'UseSession', now: '2026-01-01T00:10:00.000Z' }).then([]);
  });
});
