import type { Decider } from '../../platform/commands/decider.ts';
import { authError } from './errors.ts';
import type { AccountUnlockReason, LoginEvent, LoginFailureReason } from './events.ts';

export interface LoginState {
  /** Failed guesses since the last success, unlock or lockout. */
  consecutiveFailures: number;
  lockedUntil: string | null;
  /** When each lockout started; those of the last 24 hours set the next lockout's length. */
  lockouts: string[];
}

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
}

export type LoginCommand = LoginAttempt | { type: 'UnlockAccount'; userId: string; reason: AccountUnlockReason; now: string };

const DAY_MS = 86_400_000;
const COUNTED: ReadonlySet<LoginFailureReason> = new Set(['bad_password', 'no_password']);

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

export const accountLocked = (until: Date, now: Date) =>
  authError('ACCOUNT_LOCKED', 'Account locked after too many failed attempts', undefined, Math.max(1, Math.ceil((until.getTime() - now.getTime()) / 1000)));

export const loginDecider: Decider<LoginState, LoginCommand, LoginEvent> = {
  initialState: () => ({ consecutiveFailures: 0, lockedUntil: null, lockouts: [] }),

  evolve(state, event) {
    switch (event.type) {
      case 'LoginSucceeded':
        return { ...state, consecutiveFailures: 0 };
      case 'LoginFailed':
        return COUNTED.has(event.data.reason) ? { ...state, consecutiveFailures: state.consecutiveFailures + 1 } : state;
      case 'AccountLocked':
        return { consecutiveFailures: 0, lockedUntil: event.data.lockedUntil, lockouts: [...state.lockouts.slice(-9), event.data.lockedAt] };
      case 'AccountUnlocked':
        return { ...state, consecutiveFailures: 0, lockedUntil: null };
      default: {
        const exhaustive: never = event;
        return exhaustive;
      }
    }
  },

  decide(command, state) {
    const now = new Date(command.now);
    if (command.type === 'UnlockAccount') {
      return lockedUntil(state, now) || state.consecutiveFailures > 0
        ? [{ type: 'AccountUnlocked', data: { userId: command.userId, reason: command.reason } }]
        : [];
    }
    // Attempts on a locked account change nothing here: the handler records them apart, so a flood
    // against a locked account cannot grow the stream every later login reads.
    if (lockedUntil(state, now)) return [];
    const { userId } = command;
    const reason = failureReason(command);
    if (!reason) return [{ type: 'LoginSucceeded', data: { userId, sessionId: command.sessionId, method: command.method } }];
    const failed: LoginEvent = { type: 'LoginFailed', data: { userId, reason } };
    const failures = state.consecutiveFailures + 1;
    if (!COUNTED.has(reason) || failures < command.policy.lockoutThreshold) return [failed];
    const lockoutNumber = 1 + state.lockouts.filter((at) => now.getTime() - new Date(at).getTime() < DAY_MS).length;
    const until = new Date(now.getTime() + lockoutSeconds(lockoutNumber, command.policy.lockoutDuration) * 1000);
    return [failed, { type: 'AccountLocked', data: { userId, lockedAt: command.now, lockedUntil: until.toISOString(), lockoutNumber, failures } }];
  },
};
