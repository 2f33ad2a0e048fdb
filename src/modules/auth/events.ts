import { z } from 'zod';
import { defineEvent, type EventOf } from '../../platform/events/define-event.ts';
import { SECOND_FACTOR_METHODS } from '../mfa/index.ts';
import { userStreamId } from '../users/index.ts';

/**
 * Why a login failed. `bad_password`, `no_password` and `bad_otp` (a wrong second-factor code) are
 * guesses and count towards lockout; `disabled` (right password, disabled account), `locked` and
 * `unknown_user` do not.
 */
export const LOGIN_FAILURE_REASONS = ['bad_password', 'disabled', 'no_password', 'locked', 'unknown_user', 'bad_otp'] as const;
export type LoginFailureReason = (typeof LOGIN_FAILURE_REASONS)[number];
export const ACCOUNT_UNLOCK_REASONS = ['admin', 'password_reset'] as const;
export type AccountUnlockReason = (typeof ACCOUNT_UNLOCK_REASONS)[number];

export const loginSucceeded = defineEvent({
  type: 'LoginSucceeded',
  description: 'secondFactor and challengeHash are set when the sign-in passed a second-factor challenge (LoginMfaRequired).',
  data: z.strictObject({
    userId: z.string(),
    sessionId: z.string(),
    method: z.string(),
    secondFactor: z.enum(SECOND_FACTOR_METHODS).optional(),
    challengeHash: z.string().optional(),
  }),
  sensitive: ['challengeHash'],
});
export const loginMfaRequired = defineEvent({
  type: 'LoginMfaRequired',
  description:
    'The first factor passed on an account with a second factor: a challenge (the SHA-256 of the mfaToken\'s secret) is open until expiresAt; ' +
    'amr names the first factor, methods what may complete it.',
  data: z.strictObject({
    userId: z.string(),
    method: z.string(),
    amr: z.array(z.string()),
    challengeHash: z.string(),
    expiresAt: z.string(),
    methods: z.array(z.enum(SECOND_FACTOR_METHODS)),
  }),
  sensitive: ['challengeHash'],
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

export const FACTOR_CODE_PURPOSES = ['disable_totp'] as const;
export const factorCodeAccepted = defineEvent({
  type: 'FactorCodeAccepted',
  description:
    'A second-factor code checked outside a sign-in was right (purpose: what it allowed, recorded in the same append); ' +
    'like a successful login it ends the run of failed guesses.',
  data: z.strictObject({ userId: z.string(), purpose: z.enum(FACTOR_CODE_PURPOSES) }),
});

export const CURRENT_PASSWORD_PURPOSES = ['change_password'] as const;
export const currentPasswordAccepted = defineEvent({
  type: 'CurrentPasswordAccepted',
  description:
    'The current password, checked outside a sign-in, was right (purpose: what it allowed, recorded in the same append). ' +
    'Unlike a completed sign-in it does not end the run of failed guesses: a password is one factor, and one its holder may just have set.',
  data: z.strictObject({ userId: z.string(), purpose: z.enum(CURRENT_PASSWORD_PURPOSES) }),
});

export const loginEvents = [loginSucceeded, loginMfaRequired, loginFailed, factorCodeAccepted, currentPasswordAccepted, accountLocked, accountUnlocked];

export type LoginSucceeded = EventOf<typeof loginSucceeded>;
export type LoginFailed = EventOf<typeof loginFailed>;
export type LoginMfaRequired = EventOf<typeof loginMfaRequired>;
export type FactorCodePurpose = (typeof FACTOR_CODE_PURPOSES)[number];
export type CurrentPasswordPurpose = (typeof CURRENT_PASSWORD_PURPOSES)[number];
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
