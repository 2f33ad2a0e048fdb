import type { Decider } from '../../platform/commands/decider.ts';
import type { LoginEvent, LoginFailureReason } from './events.ts';

export interface LoginState {
  /** Failed attempts since the last success. */
  consecutiveFailures: number;
}

/** What the handler learnt before deciding: the account and whether the password matched. */
export interface LoginAttempt {
  type: 'RecordLogin';
  userId: string;
  sessionId: string;
  method: 'password';
  account: { enabled: boolean; hasPassword: boolean };
  passwordMatches: boolean;
}

export function failureReason(attempt: LoginAttempt): LoginFailureReason | null {
  if (!attempt.account.hasPassword) return 'no_password';
  if (!attempt.passwordMatches) return 'bad_password';
  if (!attempt.account.enabled) return 'disabled';
  return null;
}

export const loginDecider: Decider<LoginState, LoginAttempt, LoginEvent> = {
  initialState: () => ({ consecutiveFailures: 0 }),
  evolve: (state, event) =>
    event.type === 'LoginSucceeded' ? { consecutiveFailures: 0 } : { consecutiveFailures: state.consecutiveFailures + 1 },
  decide(attempt) {
    const reason = failureReason(attempt);
    if (reason) return [{ type: 'LoginFailed', data: { userId: attempt.userId, reason } }];
    return [{ type: 'LoginSucceeded', data: { userId: attempt.userId, sessionId: attempt.sessionId, method: attempt.method } }];
  },
};
