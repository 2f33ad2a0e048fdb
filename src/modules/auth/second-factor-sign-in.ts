import { availableMethods, invalidCode, isFactorsConflict, proofOf, spendAppend, type SecondFactorMethod } from '../mfa/index.ts';
import type { CommandContext } from '../../platform/commands/context.ts';
import { loadStates } from '../../platform/commands/handle-command.ts';
import type { SecretBox } from '../../platform/crypto/secret-box.ts';
import { isUuid } from '../../platform/ids.ts';
import { accountReads, challengeHashOf, sessionSignIn, type LoginDeps } from './login.ts';
import { accountLocked, lockedUntil, mfaTokenInvalid, openChallenge, type SecondFactorAttempt } from './login-decider.ts';

/** RFC 8176 values for what completed a challenge: a TOTP code is an OTP; any second factor makes it mfa. */
const secondFactorAmr = (first: string[], method: SecondFactorMethod): string[] => [...new Set([...first, ...(method === 'totp' ? ['otp'] : []), 'mfa'])];

/**
 * POST /api/auth/mfa/verify: the code of an open challenge completes the sign-in it names (aal2).
 * The code is spent (TOTP step, recovery code) in the append that records the success, and a
 * wrong code counts towards lockout like a wrong password: a challenge cannot be guessed at.
 */
export function secondFactorSignIn(deps: LoginDeps & { secretBox: SecretBox }) {
  const signIn = sessionSignIn(deps);

  async function attempt(tenant: string, userId: string, challengeHash: string, method: SecondFactorMethod, code: string, context: CommandContext) {
    const [user, login, factors] = await loadStates(deps, accountReads(tenant, userId));
    if (user.state.status !== 'active') throw mfaTokenInvalid();
    const active = user.state;
    const now = deps.clock.now();
    const until = lockedUntil(login.state, now);
    if (until) throw accountLocked(until, now);
    const challenge = openChallenge(login.state, challengeHash, now);
    // A factor turned off since the challenge opened: nothing can complete it.
    if (!challenge || availableMethods(factors.state).length === 0) throw mfaTokenInvalid();
    const proof = proofOf(deps.secretBox, factors.state, code, now, method);
    const step: Omit<SecondFactorAttempt, 'sessionId' | 'policy'> = {
      type: 'CompleteSecondFactor',
      userId,
      challengeHash,
      method,
      codeMatches: proof !== null,
      account: { enabled: active.enabled },
      now: now.toISOString(),
    };
    const auth = { acr: 'aal2', amr: secondFactorAmr(challenge.amr, method) };
    const sessionContext = { ...context, actor: userId };
    const outcome = await signIn(tenant, active, step, auth, context, () => (proof ? [spendAppend(deps, tenant, userId, factors, proof, sessionContext)] : []));
    if (!('tokens' in outcome)) throw new Error('A second factor opened another challenge');
    return outcome;
  }

  return async function completeSecondFactor(tenant: string, mfaToken: string, method: SecondFactorMethod, code: string, context: CommandContext) {
    const dot = mfaToken.indexOf('.');
    const userId = mfaToken.slice(0, dot);
    if (!isUuid(userId) || mfaToken.length > 512) throw mfaTokenInvalid();
    const challengeHash = challengeHashOf(mfaToken.slice(dot + 1));
    // The factors may change while the code is checked (another sign-in spent a code, or TOTP was
    // turned off): the code is checked once more on them; a code spent meanwhile is no longer valid.
    for (let tries = 1; ; tries += 1) {
      try {
        return await attempt(tenant, userId, challengeHash, method, code, context);
      } catch (error) {
        if (!isFactorsConflict(error, tenant, userId)) throw error;
        if (tries === 2) throw invalidCode();
      }
    }
  };
}
