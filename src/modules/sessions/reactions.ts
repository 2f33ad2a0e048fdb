import { isUserDeleted, passwordChangesOf, type PasswordChange, type TokenSubjects, type UserDeleted, type UserPasswordChanged } from '../users/index.ts';
import type { CommandContext } from '../../platform/commands/context.ts';
import type { EventStore, RecordedEvent } from '../../platform/eventstore/port.ts';
import { commandEach, defineReaction, type ReactionContext } from '../../platform/reactions/reaction.ts';
import type { SessionCommands } from './commands.ts';
import { sessionStreamId, type SessionRevokeReason, type SessionStarted } from './events.ts';
import type { SessionQueries } from './queries.ts';

const revokeReasonOf = (change: PasswordChange): SessionRevokeReason => (change.reason === 'reset' ? 'password_reset' : 'password_change');

/** The first password change after `version` that did not keep the session: the one that ends it, if any. */
const changeEnding = (changes: PasswordChange[], sessionId: string, version: number) =>
  changes.find((change) => change.version > version && change.keptSessionId !== sessionId);

/**
 * A deleted user keeps no session, and a password change (reset or change) ends every session but
 * the one it was made from. Each is done twice over, so that nothing escapes between the two:
 * - the triggering event revokes those the sessions read model shows once it has passed the event;
 * - every SessionStarted is checked too: a login that read the user just before the deletion or the
 *   change may start its session after it (a later position the read model had not shown), so a
 *   session of a user already deleted, or started with a password some later change did not keep it
 *   through, is revoked.
 * The SessionStarted check asks the instance's cached users once the users read model has passed
 * the session's start (the cache drops a user when that read model applies a change of theirs);
 * only a user the cache does not show active with the session's password is looked up in their stream.
 */
export function sessionReactions(deps: { store: EventStore; commands: SessionCommands; queries: SessionQueries; subjects: TokenSubjects }) {
  const revoke = (sessionIds: string[], reason: SessionRevokeReason, context: CommandContext) =>
    commandEach(sessionIds, (sessionId) => deps.commands.revoke(context.tenantId, sessionId, reason, context));

  /** The user is active in this instance's cache, with the session's password, once the users read model has passed the session's start. */
  const currentUser = async (event: RecordedEvent, { command, readModelsPassed }: ReactionContext) => {
    await readModelsPassed(['users']);
    const { userId, passwordVersion } = event.data as SessionStarted['data'];
    const user = await deps.subjects.get(command.tenantId, userId);
    return user !== null && (passwordVersion === undefined || user.passwordVersion === passwordVersion);
  };

  /** The version of the password a session was started with (undefined: started before it was recorded). */
  const startedWith = async (tenant: string, sessionId: string) => {
    const [started] = await deps.store.readStream(sessionStreamId(tenant, sessionId));
    return (started?.data as SessionStarted['data'] | undefined)?.passwordVersion;
  };

  return defineReaction({
    name: 'session-revocations',
    handlers: {
      UserDeleted: async (event, { command, readModelsPassed }) => {
        await readModelsPassed(['sessions']);
        const { userId } = event.data as UserDeleted['data'];
        return revoke(await deps.queries.allOf(command.tenantId, userId), 'user_deleted', command);
      },
      UserPasswordChanged: async (event, { command, readModelsPassed }) => {
        await readModelsPassed(['sessions']);
        const { userId, keptSessionId } = event.data as UserPasswordChanged['data'];
        const change = (await passwordChangesOf(deps.store, command.tenantId, userId)).find((each) => each.revision === event.revision);
        if (!change) return 0n;
        const others = (await deps.queries.activeOf(command.tenantId, userId)).filter((sessionId) => sessionId !== keptSessionId);
        const older = await Promise.all(others.map(async (sessionId) => ((await startedWith(command.tenantId, sessionId)) ?? 0) < change.version));
        return revoke(others.filter((_, i) => older[i]), revokeReasonOf(change), command);
      },
      SessionStarted: async (event, context) => {
        const { sessionId, userId, passwordVersion } = event.data as SessionStarted['data'];
        if (await currentUser(event, context)) return 0n;
        const tenant = context.command.tenantId;
        if (await isUserDeleted(deps.store, tenant, userId)) return revoke([sessionId], 'user_deleted', context.command);
        const ending = passwordVersion === undefined ? undefined : changeEnding(await passwordChangesOf(deps.store, tenant, userId), sessionId, passwordVersion);
        return ending ? revoke([sessionId], revokeReasonOf(ending), context.command) : 0n;
      },
    },
    // Most sessions start for an active user with the password they signed in with: their batches need no transaction at all.
    nothingToDo: { SessionStarted: currentUser },
  });
}
