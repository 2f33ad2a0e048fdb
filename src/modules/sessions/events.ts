import { z } from 'zod';
import { defineEvent, type EventOf } from '../../platform/events/define-event.ts';
import { userStreamId } from '../users/index.ts';

export const sessionStarted = defineEvent({
  type: 'SessionStarted',
  description:
    'Only the SHA-256 digest of the refresh token secret is recorded. passwordVersion is the version of the password the sign-in was decided on (absent in sessions started before it was recorded): a password change before the session started ends it (the session-revocations reaction).',
  data: z.strictObject({
    sessionId: z.string(),
    userId: z.string(),
    startedAt: z.string(),
    refreshTokenHash: z.string(),
    refreshExpiresAt: z.string(),
    ipAddress: z.string().nullable(),
    userAgent: z.string().nullable(),
    expiresAt: z.string(),
    idleTimeoutSeconds: z.number().int(),
    refreshTokenLifetimeSeconds: z.number().int(),
    acr: z.string(),
    amr: z.array(z.string()),
    passwordVersion: z.number().int().optional(),
  }),
  sensitive: ['refreshTokenHash'],
  personal: ['ipAddress', 'userAgent'],
  dataSubject: (d, metadata) => userStreamId(metadata.tenantId, d.userId),
});
export const sessionRefreshed = defineEvent({
  type: 'SessionRefreshed',
  data: z.strictObject({ sessionId: z.string(), refreshedAt: z.string(), refreshTokenHash: z.string(), refreshExpiresAt: z.string() }),
  sensitive: ['refreshTokenHash'],
});

export const SESSION_REVOKE_REASONS = ['logout', 'admin', 'user', 'refresh_token_reuse', 'max_sessions', 'password_change', 'password_reset', 'expired', 'user_deleted', 'authorization_code_reuse'] as const;
export type SessionRevokeReason = (typeof SESSION_REVOKE_REASONS)[number];
export const sessionRevoked = defineEvent({
  type: 'SessionRevoked',
  data: z.strictObject({ sessionId: z.string(), userId: z.string(), reason: z.enum(SESSION_REVOKE_REASONS) }),
});

export const SESSION_EXPIRY_REASONS = ['idle', 'lifetime'] as const;
export const sessionExpired = defineEvent({
  type: 'SessionExpired',
  description: 'Recorded by the expiry sweep, so the log (and the audit built from it) shows when a session ended.',
  data: z.strictObject({ sessionId: z.string(), userId: z.string(), reason: z.enum(SESSION_EXPIRY_REASONS), expiredAt: z.string() }),
});
export const sessionUsed = defineEvent({
  type: 'SessionUsed',
  description: "An API request with the session's access token (recorded at most once a minute per session).",
  data: z.strictObject({ sessionId: z.string(), usedAt: z.string() }),
});

/**
 * Facts that only move a session's activity times in the read model (updatedAt, the idle expiry):
 * no answer waits for their projection (the refresh grant answers from the session's stream);
 * the next query of the sessions read model in the instance does (ReadYourWrites).
 */
export const sessionActivityTypes: readonly string[] = [sessionRefreshed.type, sessionUsed.type];

export const sessionEvents = [sessionStarted, sessionRefreshed, sessionRevoked, sessionExpired, sessionUsed];

export type SessionStarted = EventOf<typeof sessionStarted>;
export type SessionRefreshed = EventOf<typeof sessionRefreshed>;
export type SessionRevoked = EventOf<typeof sessionRevoked>;
export type SessionExpired = EventOf<typeof sessionExpired>;
export type SessionUsed = EventOf<typeof sessionUsed>;
export type SessionEvent = EventOf<(typeof sessionEvents)[number]>;

export const sessionStreamId = (tenant: string, sessionId: string): string => `session-${tenant}.${sessionId}`;
