import { describe, expect, it } from 'vitest';
import { loginDecider, type LoginAttempt } from '../../../src/modules/auth/login-decider.ts';
import { fold } from '../../../src/platform/commands/decider.ts';
import { deciderSpec } from '../../support/decider-spec.ts';

const attempt = (overrides: Partial<LoginAttempt> = {}): LoginAttempt => ({
  type: 'RecordLogin',
  userId: 'u1',
  sessionId: 's1',
  method: 'password',
  account: { enabled: true, hasPassword: true },
  passwordMatches: true,
  ...overrides,
});

describe('login decider', () => {
  const spec = deciderSpec(loginDecider);
  it('succeeds only with a matching password on an enabled account that has one', () => {
    spec.given([]).when(attempt()).then([{ type: 'LoginSucceeded', data: { userId: 'u1', sessionId: 's1', method: 'password' } }]);
    spec.given([]).when(attempt({ passwordMatches: false })).then([{ type: 'LoginFailed', data: { userId: 'u1', reason: 'bad_password' } }]);
    spec.given([]).when(attempt({ account: { enabled: false, hasPassword: true } })).then([{ type: 'LoginFailed', data: { userId: 'u1', reason: 'disabled' } }]);
    spec.given([]).when(attempt({ account: { enabled: true, hasPassword: false } })).then([{ type: 'LoginFailed', data: { userId: 'u1', reason: 'no_password' } }]);
  });

  it('counts consecutive failures and resets on success', () => {
    const failed = { type: 'LoginFailed' as const, data: { userId: 'u1', reason: 'bad_password' as const } };
    const succeeded = { type: 'LoginSucceeded' as const, data: { userId: 'u1', sessionId: 's', method: 'password' } };
    expect(fold(loginDecider, [failed, failed]).consecutiveFailures).toBe(2);
    expect(fold(loginDecider, [failed, failed, succeeded]).consecutiveFailures).toBe(0);
  });
});
