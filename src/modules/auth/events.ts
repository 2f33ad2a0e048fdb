import { z } from 'zod';
import { defineEvent, type EventOf } from '../../platform/events/define-event.ts';
import { userStreamId } from '../users/index.ts';

/**
 * Why a login failed. `bad_password` and `no_password` are guesses and count towards lockout;
 * `disabled` (right password, disabled account), `locked` and `unknown_user` do not.
 */
export const LOGIN_FAILURE_REASONS = ['bad_password', 'disabled', 'no_password', 'locked', 'unknown_user'] as const;
export type LoginFailureReason = (typeof LOGIN_FAILURE_REASONS)[number];
export const ACCOUNT_UNLOCK_REASONS = ['admin', 'password_reset'] as const;
export type AccountUnlockReason = (typeof ACCOUNT_UNLOCK_REASONS)[number];

export const loginSucceeded = defineEvent({
  type: 'LoginSucceeded',
  data: z.strictObject({ userId: z.string(), sessionId: z.string(), method: z.string() }),
});
export const loginFailed = defineEvent({
  type: 'LoginFailed',
  description: 'email is only recorded for unknown accounts (there is no user id to name); the audit shows the attempted identifier.',
  data: z.strictObject({ userId: z.string().nullable(), reason: z.enum(LOGIN_FAILURE_REASONS), email: z.string().optional() }),
  personal: ['email'],
  // An unknown account names nobody: its attempted e-mail stays in clear (docs/erasure.md, limits).
  dataSubject: (d, metadata) => (d.userId ? userStreamId(metadata.tenantId, d.userId) : null),
});
export const accountLocked = defineEvent({
  type: 'AccountLocked',
  description: 'lockoutNumber counts the lockouts of the last 24 hours, this one included (it sets the escalation step).',
  data: z.strictObject({ userId: z.string(), lockedAt: z.string(), lockedUntil: z.string(), lockoutNumber: z.number().int(), failures: z.number().int() }),
});
export const accountUnlocked = defineEvent({
  type: 'AccountUnlocked',
  data: z.strictObject({ userId: z.string(), reason: z.enum(ACCOUNT_UNLOCK_REASONS) }),
});

export const loginEvents = [loginSucceeded, loginFailed, accountLocked, accountUnlocked];

export type LoginSucceeded = EventOf<typeof loginSucceeded>;
export type LoginFailed = EventOf<typeof loginFailed>;
export type AccountLocked = EventOf<typeof accountLocked>;
export type AccountUnlocked = EventOf<typeof accountUnlocked>;
export type LoginEvent = EventOf<(typeof loginEvents)[number]>;

/**
 * Login attempts live in their own stream per account, apart from the profile: the user aggregate
 * stays small however often someone logs in, and lockout counting reads only this stream.
 */
export const loginStreamId = (tenant: string, userId: string): string => `login-${tenant}.${userId}`;

/**
 * Failed attempts that change no account's state (unknown or locked account): one short stream
 * each, so a flood builds neither a hot stream nor a long one that every later login must read.
 */
export const loginAttemptStreamId = (tenant: string, attemptId: string): string => `loginattempt-${tenant}.${attemptId}`;
