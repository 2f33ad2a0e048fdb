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
export type SessionRevokeReason = 'logout' | 'admin' | 'user' | 'refresh_token_reuse' | 'max_sessions';
export type SessionRevoked = DomainEvent<'SessionRevoked', { sessionId: string; userId: string; reason: SessionRevokeReason }>;

export type SessionEvent = SessionStarted | SessionRefreshed | SessionRevoked;

export const sessionStreamId = (tenant: string, sessionId: string): string => `session-${tenant}.${sessionId}`;
