import { invalidCode, type CodeGuard } from '../mfa/index.ts';
import { flatten, type SettingsProvider } from '../settings/index.ts';
import type { CommandContext } from '../../platform/commands/context.ts';
import { handleCommand, type CommandDeps } from '../../platform/commands/handle-command.ts';
import type { StreamAppend } from '../../platform/eventstore/port.ts';
import { loginStreamId, type FactorCodePurpose } from './events.ts';
import { accountLocked, lockedUntil, loginDecider } from './login-decider.ts';

/**
 * Lockout for codes checked outside a sign-in (turning TOTP off), decided on the login stream as a
 * sign-in is: a locked account's code counts for nothing, a wrong one is a guess (and may lock),
 * and a right one commits what it allows in the same append, so requests sent together cannot
 * outrun the lock. A stolen access token buys no more guesses at a code than a stolen password.
 */
export function secondFactorGuard(deps: CommandDeps & { settings: SettingsProvider }): CodeGuard {
  return {
    async checkCode(tenant: string, userId: string, purpose: FactorCodePurpose, codeMatches: boolean, context: CommandContext, appendsIfRight: () => StreamAppend[]) {
      const policy = flatten((await deps.settings.nested(tenant)).settings);
      const now = deps.clock.now();
      const command = { type: 'CheckFactorCode' as const, userId, purpose, codeMatches, now: now.toISOString(), policy };
      const result = await handleCommand(deps, loginDecider, loginStreamId(tenant, userId), command, { ...context, actor: userId }, (events) =>
        events[0]?.type === 'FactorCodeAccepted' ? appendsIfRight() : [],
      );
      if (result.events[0]?.type === 'FactorCodeAccepted') return;
      const until = lockedUntil(result.state, now);
      throw until ? accountLocked(until, now) : invalidCode();
    },
  };
}
