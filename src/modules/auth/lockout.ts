import { loadUser } from '../users/index.ts';
import type { CommandContext } from '../../platform/commands/context.ts';
import { decideAppend, handleCommand, type CommandDeps } from '../../platform/commands/handle-command.ts';
import { notFound } from '../../platform/errors.ts';
import type { StreamAppend } from '../../platform/eventstore/port.ts';
import { loginStreamId, type AccountUnlockReason } from './events.ts';
import { loginDecider } from './login-decider.ts';

/** Lifting a lockout: by an administrator, or as part of a password reset. */
export function lockoutCommands(deps: CommandDeps) {
  const command = (userId: string, reason: AccountUnlockReason) => ({ type: 'UnlockAccount' as const, userId, reason, now: deps.clock.now().toISOString() });
  return {
    async unlock(tenant: string, userId: string, context: CommandContext) {
      if ((await loadUser(deps.store, tenant, userId)).status !== 'active') throw notFound('User');
      return handleCommand(deps, loginDecider, loginStreamId(tenant, userId), command(userId, 'admin'), context);
    },

    /** The append that unlocks an account (none when it is not locked), for an atomic password reset. */
    async unlockAppends(tenant: string, userId: string, context: CommandContext): Promise<StreamAppend[]> {
      const { append } = await decideAppend(deps, loginDecider, loginStreamId(tenant, userId), command(userId, 'password_reset'), context);
      return append ? [append] : [];
    },
  };
}

export type LockoutCommands = ReturnType<typeof lockoutCommands>;
