import type { DomainEvent } from '../../platform/commands/decider.ts';

/**
 * Why a login failed. `bad_password` and `no_password` are guesses and count towards lockout;
 * `disabled` (right password, disabled account), `locked` and `unknown_user` do not.
 */
export type LoginFailureReason = 'bad_password' | 'disabled' | 'no_password' | 'locked' | 'unknown_user';

export type LoginSucceeded = DomainEvent<'LoginSucceeded', { userId: string; sessionId: string; method: string }>;
/** `email` is only recorded for unknown accounts (there is no user id to name); audit shows the attempted identifier. */
export type LoginFailed = DomainEvent<'LoginFailed', { userId: string | null; reason: LoginFailureReason; email?: string }>;
/** `lockoutNumber` counts the lockouts of the last 24 hours, this one included (it sets the escalation step). */
export type AccountLocked = DomainEvent<'AccountLocked', { userId: string; lockedAt: string; lockedUntil: string; lockoutNumber: number; failures: number }>;
export type AccountUnlockReason = 'admin' | 'password_reset';
export type AccountUnlocked = DomainEvent<'AccountUnlocked', { userId: string; reason: AccountUnlockReason }>;

export type LoginEvent = LoginSucceeded | LoginFailed | AccountLocked | AccountUnlocked;

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
