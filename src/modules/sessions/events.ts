import type { DomainEvent } from '../../platform/commands/decider.ts';

/** Only SHA-256 digests of refresh-token secrets are recorded. */
export type SessionStarted = DomainEvent<
  'SessionStarted',
  {
    sessionId: string;
    userId: string;
    startedAt: string;
    refreshTokenHash: string;
    refreshExpiresAt: string;
    ipAddress: string | null;
    userAgent: string | null;
    expiresAt: string;
    idleTimeoutSeconds: number;
    refreshTokenLifetimeSeconds: number;
    acr: string;
    amr: string[];
  }
>;
export type SessionRefreshed = DomainEvent<
  'SessionRefreshed',
  { sessionId: string; refreshedAt: string; refreshTokenHash: string; refreshExpiresAt: string }
>;
export type SessionRevokeReason = 'logout' | 'admin' | 'user' | 'refresh_token_reuse' | 'max_sessions' | 'password_change' | 'password_reset' | 'expired' | 'user_deleted';
export type SessionRevoked = DomainEvent<'SessionRevoked', { sessionId: string; userId: string; reason: SessionRevokeReason }>;

/** Recorded by the expiry sweep, so the log (and the audit built from it) shows when a session ended. */
export type SessionExpired = DomainEvent<'SessionExpired', { sessionId: string; userId: string; reason: 'idle' | 'lifetime'; expiredAt: string }>;

/** An API request with the session's access token (recorded at most once a minute per session). */
export type SessionUsed = DomainEvent<'SessionUsed', { sessionId: string; usedAt: string }>;

export type SessionEvent = SessionStarted | SessionRefreshed | SessionRevoked | SessionExpired | SessionUsed;

export const sessionStreamId = (tenant: string, sessionId: string): string => `session-${tenant}.${sessionId}`;
