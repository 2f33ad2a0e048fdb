import type { CodeGuard } from '../mfa/index.ts';
import { flatten, type SettingsProvider } from '../settings/index.ts';
import type { CommandContext } from '../../platform/commands/context.ts';
import { handleCommand, loadState, type CommandDeps } from '../../platform/commands/handle-command.ts';
import { loginStreamId } from './events.ts';
import { accountLocked, lockedUntil, loginDecider } from './login-decider.ts';

/**
 * Lockout for codes checked outside a sign-in (turning TOTP off): a locked account's codes are not
 * checked, and a wrong one counts towards lockout as at sign-in, so a stolen access token buys no
 * more guesses at a code than a stolen password does.
 */
export function secondFactorGuard(deps: CommandDeps & { settings: SettingsProvider }): CodeGuard {
  const refuseWhileLocked = (state: Parameters<typeof lockedUntil>[0]) => {
    const now = deps.clock.now();
    const until = lockedUntil(state, now);
    if (until) throw accountLocked(until, now);
  };
  return {
    async assertUnlocked(tenant: string, userId: string) {
      refuseWhileLocked((await loadState(deps, loginDecider, loginStreamId(tenant, userId))).state);
    },
    async wrongCode(tenant: string, userId: string, context: CommandContext) {
      const policy = flatten((await deps.settings.nested(tenant)).settings);
      const command = { type: 'RecordWrongCode' as const, userId, now: deps.clock.now().toISOString(), policy };
      refuseWhileLocked((await handleCommand(deps, loginDecider, loginStreamId(tenant, userId), command, { ...context, actor: userId })).state);
    },
  };
}
