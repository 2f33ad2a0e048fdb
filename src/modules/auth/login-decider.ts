import type { SecondFactorMethod } from '../mfa/index.ts';
import type { Decider } from '../../platform/commands/decider.ts';
import { authError } from './errors.ts';
import type { AccountUnlockReason, CurrentPasswordPurpose, FactorCodePurpose, LoginEvent, LoginFailureReason } from './events.ts';

export interface LoginState {
  /** Failed guesses since the last success, unlock or lockout. */
  consecutiveFailures: number;
  lockedUntil: string | null;
  /** When each lockout started; those of the last 24 hours set the next lockout's length. */
  lockouts: string[];
  /** Second-factor challenges opened by a first factor and not completed (the last few). */
  challenges: OpenChallenge[];
}

export interface OpenChallenge {
  hash: string;
  expiresAt: string;
  /** The first factor's method and amr, carried to the sign-in the challenge completes. */
  method: string;
  amr: string[];
}

/** How many pending challenges an account keeps: an older one is void (a sign-in started again). */
const OPEN_CHALLENGES = 5;

export interface LockoutPolicy {
  lockoutThreshold: number;
  lockoutDuration: number;
}

/** What the handler learnt before deciding: the account and whether the password matched. */
export interface LoginAttempt {
  type: 'RecordLogin';
  userId: string;
  sessionId: string;
  method: 'password' | 'magic_link' | 'signup';
  account: { enabled: boolean; hasPassword: boolean };
  passwordMatches: boolean;
  now: string;
  policy: LockoutPolicy;
  /** Set when the account has a second factor: a success opens this challenge instead of a session. */
  challenge?: { hash: string; expiresAt: string; amr: string[]; methods: SecondFactorMethod[] };
}

/** The second step of a sign-in: a code for an open challenge, checked by the handler against the account's factors. */
export interface SecondFactorAttempt {
  type: 'CompleteSecondFactor';
  userId: string;
  sessionId: string;
  challengeHash: string;
  method: SecondFactorMethod;
  codeMatches: boolean;
  account: { enabled: boolean };
  now: string;
  policy: LockoutPolicy;
}

/** A code checked outside a sign-in (turning a factor off): decided here so that a locked account's code counts for nothing, and a wrong one as a guess. */
export interface FactorCodeAttempt {
  type: 'CheckFactorCode';
  userId: string;
  purpose: FactorCodePurpose;
  codeMatches: boolean;
  now: string;
  policy: LockoutPolicy;
}

/**
 * The current password checked outside a sign-in (changing it), decided here as a login's password
 * is: a locked account's counts for nothing, a wrong one (or any, on an account without a password)
 * is a guess. A right one ends no run of guesses: it completes no sign-in.
 */
export interface CurrentPasswordAttempt {
  type: 'CheckCurrentPassword';
  userId: string;
  purpose: CurrentPasswordPurpose;
  account: { hasPassword: boolean };
  passwordMatches: boolean;
  now: string;
  policy: LockoutPolicy;
}

export type LoginCommand =
  | LoginAttempt
  | SecondFactorAttempt
  | FactorCodeAttempt
  | CurrentPasswordAttempt
  | { type: 'UnlockAccount'; userId: string; reason: AccountUnlockReason; now: string };

const DAY_MS = 86_400_000;
const COUNTED: ReadonlySet<LoginFailureReason> = new Set(['bad_password', 'no_password', 'bad_otp']);

export function failureReason(attempt: LoginAttempt): LoginFailureReason | null {
  if (!attempt.account.hasPassword && attempt.method === 'password') return 'no_password';
  if (!attempt.passwordMatches) return 'bad_password';
  if (!attempt.account.enabled) return 'disabled';
  return null;
}

/** The lock in force at `now`, if any. */
export const lockedUntil = (state: LoginState, now: Date): Date | null =>
  state.lockedUntil && new Date(state.lockedUntil) > now ? new Date(state.lockedUntil) : null;

/**
 * decisions.md, Security settings: the first lockout lasts lockoutDuration, a second within 24
 * hours 30 minutes (or lockoutDuration if longer), a third and later 24 hours.
 */
export function lockoutSeconds(lockoutNumber: number, lockoutDuration: number): number {
  if (lockoutNumber <= 1) return lockoutDuration;
  return Math.max(lockoutNumber === 2 ? 1800 : 86_400, lockoutDuration);
}

/** The challenge an mfaToken names, if it is still open at `now`. */
export const openChallenge = (state: LoginState, hash: string, now: Date): OpenChallenge | null =>
  state.challenges.find((challenge) => challenge.hash === hash && new Date(challenge.expiresAt) > now) ?? null;

export const mfaTokenInvalid = () => authError('MFA_TOKEN_INVALID', 'The sign-in challenge is not valid, was used, or has expired: sign in again');

export const accountLocked = (until: Date, now: Date) =>
  authError('ACCOUNT_LOCKED', 'Account locked after too many failed attempts', undefined, Math.max(1, Math.ceil((until.getTime() - now.getTime()) / 1000)));

export const loginDecider: Decider<LoginState, LoginCommand, LoginEvent> = {
  initialState: () => ({ consecutiveFailures: 0, lockedUntil: null, lockouts: [], challenges: [] }),

  evolve(state, event) {
    switch (event.type) {
      case 'LoginSucceeded': {
        const { challengeHash } = event.data;
        const challenges = challengeHash ? state.challenges.filter((challenge) => challenge.hash !== challengeHash) : state.challenges;
        return { ...state, consecutiveFailures: 0, challenges };
      }
      // A right first factor is no success yet: failures keep counting until the second passes.
      case 'LoginMfaRequired': {
        const { challengeHash: hash, expiresAt, method, amr } = event.data;
        return { ...state, challenges: [...state.challenges, { hash, expiresAt, method, amr }].slice(-OPEN_CHALLENGES) };
      }
      case 'LoginFailed':
        return COUNTED.has(event.data.reason) ? { ...state, consecutiveFailures: state.consecutiveFailures + 1 } : state;
      case 'FactorCodeAccepted':
        return { ...state, consecutiveFailures: 0 };
      // A password alone resets nothing, as at a sign-in with a second factor (LoginMfaRequired).
      case 'CurrentPasswordAccepted':
        return state;
      case 'AccountLocked':
        return {
          consecutiveFailures: 0,
          lockedUntil: event.data.lockedUntil,
          lockouts: [...state.lockouts.slice(-9), event.data.lockedAt],
          challenges: [],
        };
      // An unlock (by an administrator, or with a password reset) also voids challenges opened before it.
      case 'AccountUnlocked':
        return { ...state, consecutiveFailures: 0, lockedUntil: null, challenges: [] };
      default: {
        const exhaustive: never = event;
        return exhaustive;
      }
    }
  },

  decide(command, state) {
    const now = new Date(command.now);
    if (command.type === 'UnlockAccount') {
      return lockedUntil(state, now) || state.consecutiveFailures > 0 || state.challenges.length > 0
        ? [{ type: 'AccountUnlocked', data: { userId: command.userId, reason: command.reason } }]
        : [];
    }
    // Attempts on a locked account change nothing here: the handler records them apart, so a flood
    // against a locked account cannot grow the stream every later login reads.
    if (lockedUntil(state, now)) return [];
    if (command.type === 'CompleteSecondFactor') return completeSecondFactor(command, state, now);
    if (command.type === 'CheckFactorCode') {
      return command.codeMatches ? [{ type: 'FactorCodeAccepted', data: { userId: command.userId, purpose: command.purpose } }] : failedAttempt(state, command, 'bad_otp', now);
    }
    if (command.type === 'CheckCurrentPassword') {
      if (!command.account.hasPassword) return failedAttempt(state, command, 'no_password', now);
      return command.passwordMatches ? [{ type: 'CurrentPasswordAccepted', data: { userId: command.userId, purpose: command.purpose } }] : failedAttempt(state, command, 'bad_password', now);
    }
    const reason = failureReason(command);
    if (!reason) return [command.challenge ? challengeOpened(command, command.challenge) : succeeded(command, command.method)];
    return failedAttempt(state, command, reason, now);
  },
};

function challengeOpened(attempt: LoginAttempt, { hash, expiresAt, amr, methods }: NonNullable<LoginAttempt['challenge']>): LoginEvent {
  return { type: 'LoginMfaRequired', data: { userId: attempt.userId, method: attempt.method, amr, challengeHash: hash, expiresAt, methods } };
}

const succeeded = ({ userId, sessionId }: { userId: string; sessionId: string }, method: string, secondFactor?: { method: SecondFactorMethod; challengeHash: string }): LoginEvent => ({
  type: 'LoginSucceeded',
  data: { userId, sessionId, method, ...(secondFactor ? { secondFactor: secondFactor.method, challengeHash: secondFactor.challengeHash } : {}) },
});

function completeSecondFactor(command: SecondFactorAttempt, state: LoginState, now: Date): LoginEvent[] {
  const challenge = openChallenge(state, command.challengeHash, now);
  if (!challenge) throw mfaTokenInvalid();
  if (!command.codeMatches) return failedAttempt(state, command, 'bad_otp', now);
  if (!command.account.enabled) return failedAttempt(state, command, 'disabled', now);
  return [succeeded(command, challenge.method, { method: command.method, challengeHash: challenge.hash })];
}

/** A failure, and the lockout it triggers when it is a guess that reaches the threshold. */
function failedAttempt(state: LoginState, command: { userId: string; now: string; policy: LockoutPolicy }, reason: LoginFailureReason, now: Date): LoginEvent[] {
  const { userId } = command;
  const failed: LoginEvent = { type: 'LoginFailed', data: { userId, reason } };
  const failures = state.consecutiveFailures + 1;
  if (!COUNTED.has(reason) || failures < command.policy.lockoutThreshold) return [failed];
  const lockoutNumber = 1 + state.lockouts.filter((at) => now.getTime() - new Date(at).getTime() < DAY_MS).length;
  const until = new Date(now.getTime() + lockoutSeconds(lockoutNumber, command.policy.lockoutDuration) * 1000);
  return [failed, { type: 'AccountLocked', data: { userId, lockedAt: command.now, lockedUntil: until.toISOString(), lockoutNumber, failures } }];
}
