import { roleDecider, roleStreamId, type RoleDeleted, type RoleEvent } from '../roles/index.ts';
import type { CommandContext } from '../../platform/commands/context.ts';
import { fold } from '../../platform/commands/decider.ts';
import { DomainError } from '../../platform/errors.ts';
import type { EventStore } from '../../platform/eventstore/port.ts';
import { commandEach, defineReaction } from '../../platform/reactions/reaction.ts';
import type { UserCommands } from './commands.ts';
import type { RoleRef, UserCreated, UserRoleAssigned } from './events.ts';
import type { UserQueries } from './queries.ts';

/**
 * A deleted role is held by nobody. RoleDeleted removes it from the holders the read model shows
 * once it has passed the deletion; an assignment decided on a role read just before its deletion
 * may land after it (a later position), so an assignment of a role already deleted is undone too.
 */
export function userReactions(deps: { store: EventStore; commands: UserCommands; queries: UserQueries }) {
  const remove = (userId: string, roleId: string, context: CommandContext) =>
    deps.commands.removeRole(context.tenantId, userId, roleId, context, 'role_deleted').catch((error: unknown) => {
      // A user deleted meanwhile holds no role any more.
      if (error instanceof DomainError && error.code === 'NOT_FOUND') return { position: 0n };
      throw error;
    });

  /** Removes from `userId` those of `roles` that are deleted (read from their streams, not a read model). */
  const removeDeleted = async (userId: string, roles: RoleRef[], context: CommandContext) => {
    const deleted: string[] = [];
    for (const role of roles) {
      const state = fold(roleDecider, (await deps.store.readStream(roleStreamId(context.tenantId, role.id))) as unknown as RoleEvent[]);
      if (state.status === 'deleted') deleted.push(role.id);
    }
    return commandEach(deleted, (roleId) => remove(userId, roleId, context));
  };

  return defineReaction({
    name: 'role-removals',
    handlers: {
      RoleDeleted: async (event, { command, readModelsPassed }) => {
        await readModelsPassed(['users']);
        const { roleId } = event.data as RoleDeleted['data'];
        return commandEach(await deps.queries.holdersOf(command.tenantId, roleId), (userId) => remove(userId, roleId, command));
      },
      UserRoleAssigned: async (event, { command }) => {
        const { userId, role } = event.data as UserRoleAssigned['data'];
        return removeDeleted(userId, [role], command);
      },
      UserCreated: async (event, { command }) => {
        const { userId, roles } = event.data as UserCreated['data'];
        return removeDeleted(userId, roles, command);
      },
    },
  });
}
