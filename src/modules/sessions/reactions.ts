import { isUserDeleted, type TokenSubjects, type UserDeleted } from '../users/index.ts';
import type { CommandContext } from '../../platform/commands/context.ts';
import type { EventStore, RecordedEvent } from '../../platform/eventstore/port.ts';
import { commandEach, defineReaction, type ReactionContext } from '../../platform/reactions/reaction.ts';
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

  /** The user is active in this instance's cache once the users read model has passed the session's start. */
  const userActive = async (event: RecordedEvent, { command, readModelsPassed }: ReactionContext) => {
    await readModelsPassed(['users']);
    return (await deps.subjects.get(command.tenantId, (event.data as SessionStarted['data']).userId)) !== null;
  };

  return defineReaction({
    name: 'session-revocations',
    handlers: {
      UserDeleted: async (event, { command, readModelsPassed }) => {
        await readModelsPassed(['sessions']);
        const { userId } = event.data as UserDeleted['data'];
        return revoke(await deps.queries.allOf(command.tenantId, userId), command);
      },
      SessionStarted: async (event, context) => {
        const { sessionId, userId } = event.data as SessionStarted['data'];
        if (await userActive(event, context)) return 0n;
        return (await isUserDeleted(deps.store, context.command.tenantId, userId)) ? revoke([sessionId], context.command) : 0n;
      },
    },
    // Most sessions start for an active user: their batches need no transaction at all.
    nothingToDo: { SessionStarted: userActive },
  });
}
