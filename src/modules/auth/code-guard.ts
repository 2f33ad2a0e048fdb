import { invalidCode, type CodeGuard } from '../mfa/index.ts';
import { flatten, type SettingsProvider } from '../settings/index.ts';
import type { CurrentPasswordGuard } from '../users/index.ts';
import type { CommandContext } from '../../platform/commands/context.ts';
import { handleCommand, loadState, type CommandDeps } from '../../platform/commands/handle-command.ts';
import type { StreamAppend } from '../../platform/eventstore/port.ts';
import { loginStreamId, type LoginEvent } from './events.ts';
import { accountLocked, lockedUntil, loginDecider, type CurrentPasswordAttempt, type FactorCodeAttempt } from './login-decider.ts';

type GuardDeps = CommandDeps & { settings: SettingsProvider };

/** A credential checked outside a sign-in, as the handler found it (the decider adds the time and the policy). */
type OutsideSignIn = Omit<FactorCodeAttempt, 'now' | 'policy'> | Omit<CurrentPasswordAttempt, 'now' | 'policy'>;

const ACCEPTED: ReadonlySet<LoginEvent['type']> = new Set(['FactorCodeAccepted', 'CurrentPasswordAccepted']);
const accepted = (events: LoginEvent[]) => events[0] !== undefined && ACCEPTED.has(events[0].type);

/**
 * Lockout for credentials checked outside a sign-in (a code turning TOTP off, the current password
 * at a change), decided on the login stream as a sign-in is: a locked account's credential counts
 * for nothing, a wrong one is a guess (and may lock), and a right one commits what it allows in the
 * same append, so requests sent together cannot outrun the lock. A stolen access token buys no more
 * guesses than the login form gives. Throws ACCOUNT_LOCKED while locked (or when this guess
 * locks), else `wrong()` for a wrong credential.
 */
async function checkOnLoginStream(
  deps: GuardDeps,
  tenant: string,
  check: OutsideSignIn,
  context: CommandContext,
  appendsIfRight: () => Promise<StreamAppend[]> | StreamAppend[],
  wrong: () => Error,
): Promise<void> {
  const policy = flatten((await deps.settings.nested(tenant)).settings);
  const now = deps.clock.now();
  const command = { ...check, now: now.toISOString(), policy };
  const result = await handleCommand(deps, loginDecider, loginStreamId(tenant, check.userId), command, { ...context, actor: check.userId }, (events) =>
    accepted(events) ? appendsIfRight() : [],
  );
  if (accepted(result.events)) return;
  const until = lockedUntil(result.state, now);
  throw until ? accountLocked(until, now) : wrong();
}

/** Codes checked outside a sign-in (turning TOTP off): a right one resets the count, as a completed sign-in does. */
export function secondFactorGuard(deps: GuardDeps): CodeGuard {
  return {
    checkCode: (tenant, userId, purpose, codeMatches, context, appendsIfRight) =>
      checkOnLoginStream(deps, tenant, { type: 'CheckFactorCode', userId, purpose, codeMatches }, context, appendsIfRight, invalidCode),
  };
}

/**
 * The current password at a change: like a login's, refused before any hashing while the account is
 * locked (423 ACCOUNT_LOCKED), and a wrong one is a guess (reason bad_password). A right one ends
 * no run of guesses (CurrentPasswordAccepted): it completes no sign-in.
 */
export function currentPasswordGuard(deps: GuardDeps): CurrentPasswordGuard {
  return {
    async checkCurrentPassword(tenant, userId, purpose, proof, context, appendsIfRight, wrong) {
      const now = deps.clock.now();
      const until = lockedUntil((await loadState(deps, loginDecider, loginStreamId(tenant, userId))).state, now);
      if (until) throw accountLocked(until, now);
      const check = { type: 'CheckCurrentPassword' as const, userId, purpose, account: { hasPassword: proof.hasPassword }, passwordMatches: await proof.verify() };
      return checkOnLoginStream(deps, tenant, check, context, appendsIfRight, wrong);
    },
  };
}
