import type { DomainEvent } from '../../platform/commands/decider.ts';

/** Only the SHA-256 of the refresh token's secret is recorded. */
export type SessionStarted = DomainEvent<
  'SessionStarted',
  {
    sessionId: string;
    userId: string;
    refreshTokenHash: string;
    ipAddress: string | null;
    userAgent: string | null;
    expiresAt: string;
    idleTimeoutSeconds: number;
    acr: string;
    amr: string[];
  }
>;

export type SessionEvent = SessionStarted;

export const sessionStreamId = (tenant: string, sessionId: string): string => `session-${tenant}.${sessionId}`;
