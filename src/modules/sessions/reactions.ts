import { isUserDeleted, type TokenSubjects, type UserDeleted } from '../users/index.ts';
import type { CommandContext } from '../../platform/commands/context.ts';
import type { EventStore } from '../../platform/eventstore/port.ts';
import { commandEach, defineReaction } from '../../platform/reactions/reaction.ts';
import type { SessionCommands } from './commands.ts';
import type { SessionStarted } from './events.ts';
import type { SessionQueries } from './queries.ts';

/**
 * A deleted user keeps no session. UserDeleted revokes those the read model shows once it has
 * passed the deletion; a login that read the user just before the deletion may still start a
 * session after it (a later position the read model had not shown), so every SessionStarted of a
 * user already deleted is revoked too. Between the two, nothing escapes. That check asks the
 * instance's cached users once the users read model has passed the session's start (the cache drops
 * a user when that read model applies a change of theirs, so a deletion before the start is seen);
 * only a user the cache does not show active is looked up in their stream.
 */
export function sessionReactions(deps: { store: EventStore; commands: SessionCommands; queries: SessionQueries; subjects: TokenSubjects }) {
  const revoke = (sessionIds: string[], context: CommandContext) =>
    commandEach(sessionIds, (sessionId) => deps.commands.revoke(context.tenantId, sessionId, 'user_deleted', context));

  return defineReaction({
    name: 'session-revocations',
    handlers: {
      UserDeleted: async (event, { command, readModelsPassed }) => {
        await readModelsPassed(['sessions']);
        const { userId } = event.data as UserDeleted['data'];
        return revoke(await deps.queries.allOf(command.tenantId, userId), command);
      },
      SessionStarted: async (event, { command, readModelsPassed }) => {
        const { sessionId, userId } = event.data as SessionStarted['data'];
        await readModelsPassed(['users']);
        if (await deps.subjects.get(command.tenantId, userId)) return 0n;
        return (await isUserDeleted(deps.store, command.tenantId, userId)) ? revoke([sessionId], command) : 0n;
      },
    },
  });
}
