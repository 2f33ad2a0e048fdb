import type { DomainEvent } from '../../platform/commands/decider.ts';

export type LoginFailureReason = 'bad_password' | 'disabled' | 'no_password';

export type LoginSucceeded = DomainEvent<'LoginSucceeded', { userId: string; sessionId: string; method: string }>;
export type LoginFailed = DomainEvent<'LoginFailed', { userId: string; reason: LoginFailureReason }>;

export type LoginEvent = LoginSucceeded | LoginFailed;

/**
 * Login attempts live in their own stream per account, apart from the profile: the user aggregate
 * stays small however often someone logs in, and lockout counting reads only this stream.
 */
export const loginStreamId = (tenant: string, userId: string): string => `login-${tenant}.${userId}`;
