import { describe, expect, it } from 'vitest';
import type { LoginEvent } from '../../../src/modules/auth/events.ts';
import { lockoutSeconds, loginDecider, type CurrentPasswordAttempt, type LoginAttempt, type SecondFactorAttempt } from '../../../src/modules/auth/login-decider.ts';
import { fold } from '../../../src/platform/commands/decider.ts';
import { deciderSpec } from '../../support/decider-spec.ts';

const T0 = new Date('2026-01-01T00:00:00Z');
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000).toISOString();
const policy = { lockoutThreshold: 3, lockoutDuration: 300 };

const attempt = (overrides: Partial<LoginAttempt> = {}): LoginAttempt => ({
  type: 'RecordLogin',
  userId: 'u1',
  sessionId: 's1',
  method: 'password',
  account: { enabled: true, hasPassword: true },
  passwordMatches: true,
  now: at(0),
  policy,
  ...overrides,
});
const failed = (reason: 'bad_password' | 'locked' | 'disabled' = 'bad_password'): LoginEvent => ({ type: 'LoginFailed', data: { userId: 'u1', reason } });
const succeeded: LoginEvent = { type: 'LoginSucceeded', data: { userId: 'u1', sessionId: 's', method: 'password' } };
const locked = (lockedAt: string, lockedUntil: string, lockoutNumber = 1): LoginEvent => ({
  type: 'AccountLocked',
  data: { userId: 'u1', lockedAt, lockedUntil, lockoutNumber, failures: 3 },
});

describe('login decider', () => {
  const spec = deciderSpec(loginDecider);

  it('succeeds only with a matching password on an enabled account that has one', () => {
    spec.given([]).when(attempt()).then([{ type: 'LoginSucceeded', data: { userId: 'u1', sessionId: 's1', method: 'password' } }]);
    spec.given([]).when(attempt({ passwordMatches: false })).then([failed()]);
    spec.given([]).when(attempt({ account: { enabled: false, hasPassword: true } })).then([failed('disabled')]);
    spec.given([]).when(attempt({ account: { enabled: true, hasPassword: false } })).then([{ type: 'LoginFailed', data: { userId: 'u1', reason: 'no_password' } }]);
  });

  it('a magic link needs no password', () => {
    spec
      .given([])
      .when(attempt({ method: 'magic_link', account: { enabled: true, hasPassword: false } }))
      .then([{ type: 'LoginSucceeded', data: { userId: 'u1', sessionId: 's1', method: 'magic_link' } }]);
  });

  it('counts consecutive guesses, not disabled-account attempts, and resets on success', () => {
    expect(fold(loginDecider, [failed(), failed()]).consecutiveFailures).toBe(2);
    expect(fold(loginDecider, [failed(), failed('disabled')]).consecutiveFailures).toBe(1);
    expect(fold(loginDecider, [failed(), failed(), succeeded]).consecutiveFailures).toBe(0);
  });

  it('locks exactly at the threshold for lockoutDuration', () => {
    spec.given([failed()]).when(attempt({ passwordMatches: false })).then([failed()]);
    spec
      .given([failed(), failed()])
      .when(attempt({ passwordMatches: false }))
      .then([failed(), { type: 'AccountLocked', data: { userId: 'u1', lockedAt: at(0), lockedUntil: at(300), lockoutNumber: 1, failures: 3 } }]);
  });

  it('refuses every attempt while locked, even with the right password, leaving the stream unchanged', () => {
    const history = [failed(), failed(), failed(), locked(at(0), at(300))];
    spec.given(history).when(attempt({ now: at(299) })).then([]);
    spec.given(history).when(attempt({ now: at(299), passwordMatches: false })).then([]);
    expect(fold(loginDecider, history)).toMatchObject({ consecutiveFailures: 0, lockedUntil: at(300) });
    spec.given(history).when(attempt({ now: at(300) })).then([{ type: 'LoginSucceeded', data: { userId: 'u1', sessionId: 's1', method: 'password' } }]);
  });

  it('escalates: the second lockout within 24 hours lasts 30 minutes, the third 24 hours', () => {
    const first = [failed(), failed(), failed(), locked(at(0), at(300))];
    const second = [...first, failed(), failed(), failed(), locked(at(400), at(400 + 1800), 2)];
    spec
      .given([...first, failed(), failed()])
      .when(attempt({ passwordMatches: false, now: at(400) }))
      .then([failed(), { type: 'AccountLocked', data: { userId: 'u1', lockedAt: at(400), lockedUntil: at(400 + 1800), lockoutNumber: 2, failures: 3 } }]);
    spec
      .given([...second, failed(), failed()])
      .when(attempt({ passwordMatches: false, now: at(3000) }))
      .then([failed(), { type: 'AccountLocked', data: { userId: 'u1', lockedAt: at(3000), lockedUntil: at(3000 + 86_400), lockoutNumber: 3, failures: 3 } }]);
    // A day after the first two lockouts, the next one is a first lockout again.
    spec
      .given([...second, failed(), failed()])
      .when(attempt({ passwordMatches: false, now: at(400 + 86_400) }))
      .then([failed(), { type: 'AccountLocked', data: { userId: 'u1', lockedAt: at(86_800), lockedUntil: at(86_800 + 300), lockoutNumber: 1, failures: 3 } }]);
  });

  it('lockout lengths follow decisions.md', () => {
    expect([1, 2, 3, 4].map((n) => lockoutSeconds(n, 300))).toEqual([300, 1800, 86_400, 86_400]);
    expect([1, 2, 3].map((n) => lockoutSeconds(n, 3600))).toEqual([3600, 3600, 86_400]);
  });

  it('an unlock ends the lock and the count; unlocking an unlocked account changes nothing', () => {
    const history = [failed(), failed(), failed(), locked(at(0), at(300))];
    spec.given(history).when({ type: 'UnlockAccount', userId: 'u1', reason: 'admin', now: at(5) }).then([{ type: 'AccountUnlocked', data: { userId: 'u1', reason: 'admin' } }]);
    spec.given([]).when({ type: 'UnlockAccount', userId: 'u1', reason: 'admin', now: at(5) }).then([]);
    const unlocked = fold(loginDecider, [...history, { type: 'AccountUnlocked', data: { userId: 'u1', reason: 'admin' } }]);
    expect(unlocked).toMatchObject({ consecutiveFailures: 0, lockedUntil: null });
  });

  describe('the current password checked outside a sign-in (change-password)', () => {
    const check = (overrides: Partial<CurrentPasswordAttempt> = {}): CurrentPasswordAttempt => ({
      type: 'CheckCurrentPassword',
      userId: 'u1',
      purpose: 'change_password',
      account: { hasPassword: true },
      passwordMatches: true,
      now: at(10),
      policy,
      ...overrides,
    });
    const accepted: LoginEvent = { type: 'CurrentPasswordAccepted', data: { userId: 'u1', purpose: 'change_password' } };

    it('a right one is accepted, a wrong one is a guess like a wrong password at login', () => {
      spec.given([]).when(check()).then([accepted]);
      spec.given([]).when(check({ passwordMatches: false })).then([failed()]);
      spec.given([]).when(check({ account: { hasPassword: false }, passwordMatches: false })).then([{ type: 'LoginFailed', data: { userId: 'u1', reason: 'no_password' } }]);
    });

    it('counts with the failed logins before it (its own are the same event) and locks exactly at the threshold', () => {
      spec.given([failed()]).when(check({ passwordMatches: false })).then([failed()]);
      spec.given([failed(), failed()]).when(check({ passwordMatches: false })).then([failed(), locked(at(10), at(310))]);
      spec.given([failed(), failed('disabled')]).when(check({ passwordMatches: false })).then([failed()]);
    });

    it('a right one does not reset the count: it completes no sign-in', () => {
      expect(fold(loginDecider, [failed(), failed(), accepted]).consecutiveFailures).toBe(2);
      spec
        .given([failed(), failed(), accepted])
        .when(check({ passwordMatches: false }))
        .then([failed(), locked(at(10), at(310))]);
      expect(fold(loginDecider, [failed(), failed(), accepted, succeeded]).consecutiveFailures).toBe(0);
    });

    it('counts for nothing while the account is locked, right or wrong', () => {
      const history = [failed(), failed(), failed(), locked(at(0), at(300))];
      spec.given(history).when(check()).then([]);
      spec.given(history).when(check({ passwordMatches: false })).then([]);
      spec.given(history).when(check({ now: at(300) })).then([accepted]);
    });
  });

  describe('second factor', () => {
    const challenge = { hash: 'h1', expiresAt: at(300), amr: ['pwd'], methods: ['totp' as const] };
    const opened: LoginEvent = { type: 'LoginMfaRequired', data: { userId: 'u1', method: 'password', amr: ['pwd'], challengeHash: 'h1', expiresAt: at(300), methods: ['totp'] } };
    const complete = (overrides: Partial<SecondFactorAttempt> = {}): SecondFactorAttempt => ({
      type: 'CompleteSecondFactor',
      userId: 'u1',
      sessionId: 's2',
      challengeHash: 'h1',
      method: 'totp',
      codeMatches: true,
      account: { enabled: true },
      now: at(10),
      policy,
      ...overrides,
    });
    const completed: LoginEvent = { type: 'LoginSucceeded', data: { userId: 'u1', sessionId: 's2', method: 'password', secondFactor: 'totp', challengeHash: 'h1' } };
    const badCode: LoginEvent = { type: 'LoginFailed', data: { userId: 'u1', reason: 'bad_otp' } };

    it('a right password on an account with a factor opens a challenge, not a session', () => {
      spec.given([]).when(attempt({ challenge })).then([opened]);
      spec.given([]).when(attempt({ challenge, passwordMatches: false })).then([failed()]);
    });

    it('the challenge completes once, with the first factor\'s method, before it expires', () => {
      spec.given([opened]).when(complete()).then([completed]);
      spec.given([opened, completed]).when(complete()).thenThrows('MFA_TOKEN_INVALID');
      spec.given([opened]).when(complete({ now: at(300) })).thenThrows('MFA_TOKEN_INVALID');
      spec.given([opened]).when(complete({ challengeHash: 'other' })).thenThrows('MFA_TOKEN_INVALID');
      spec.given([]).when(complete()).thenThrows('MFA_TOKEN_INVALID');
    });

    it('a wrong code counts towards lockout, and a right password in between does not reset the count', () => {
      spec.given([opened]).when(complete({ codeMatches: false })).then([badCode]);
      expect(fold(loginDecider, [opened, badCode, opened, badCode, opened]).consecutiveFailures).toBe(2);
      spec
        .given([opened, badCode, opened, badCode, opened])
        .when(complete({ codeMatches: false }))
        .then([badCode, { type: 'AccountLocked', data: { userId: 'u1', lockedAt: at(10), lockedUntil: at(310), lockoutNumber: 1, failures: 3 } }]);
      expect(fold(loginDecider, [opened, badCode, completed]).consecutiveFailures).toBe(0);
    });

    it('a lockout or an unlock (a password reset) voids open challenges; a disabled account cannot complete one', () => {
      const lock = locked(at(5), at(6));
      spec.given([opened, lock]).when(complete()).thenThrows('MFA_TOKEN_INVALID');
      spec.given([opened, { type: 'AccountUnlocked', data: { userId: 'u1', reason: 'password_reset' } }]).when(complete()).thenThrows('MFA_TOKEN_INVALID');
      spec.given([opened]).when(complete({ account: { enabled: false } })).then([failed('disabled')]);
    });

    it('a code checked outside a sign-in: right ends the run of guesses, wrong is a guess, nothing while locked', () => {
      const check = (codeMatches: boolean) => ({ type: 'CheckFactorCode' as const, userId: 'u1', purpose: 'disable_totp' as const, codeMatches, now: at(10), policy });
      const accepted: LoginEvent = { type: 'FactorCodeAccepted', data: { userId: 'u1', purpose: 'disable_totp' } };
      spec.given([failed(), failed()]).when(check(true)).then([accepted]);
      expect(fold(loginDecider, [failed(), failed(), accepted]).consecutiveFailures).toBe(0);
      spec.given([failed()]).when(check(false)).then([badCode]);
      spec
        .given([failed(), badCode])
        .when(check(false))
        .then([badCode, { type: 'AccountLocked', data: { userId: 'u1', lockedAt: at(10), lockedUntil: at(310), lockoutNumber: 1, failures: 3 } }]);
      spec.given([locked(at(5), at(600))]).when(check(true)).then([]);
    });

    it('an unlock is recorded for open challenges alone, to void them', () => {
      spec.given([opened]).when({ type: 'UnlockAccount', userId: 'u1', reason: 'password_reset', now: at(10) }).then([{ type: 'AccountUnlocked', data: { userId: 'u1', reason: 'password_reset' } }]);
      spec.given([]).when({ type: 'UnlockAccount', userId: 'u1', reason: 'password_reset', now: at(10) }).then([]);
    });

    it('keeps the last five challenges open', () => {
      const open = (hash: string): LoginEvent => ({ type: 'LoginMfaRequired', data: { ...(opened.data as object), challengeHash: hash } as never });
      const state = fold(loginDecider, ['a', 'b', 'c', 'd', 'e', 'f'].map(open));
      expect(state.challenges.map((c) => c.hash)).toEqual(['b', 'c', 'd', 'e', 'f']);
    });
  });
});
