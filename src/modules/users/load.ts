import { loadState } from '../../platform/commands/handle-command.ts';
import type { EventStore } from '../../platform/eventstore/port.ts';
import { userDecider, type UserState } from './decider.ts';
import { userStreamId, type PasswordChangeReason, type UserEvent, type UserPasswordChanged } from './events.ts';

/**
 * The user aggregate's current state, from its stream (the write side, never a read model): the
 * events after the state this instance folded last (as the user commands remember it) folded onto it.
 */
export async function loadUser(store: EventStore, tenant: string, userId: string): Promise<UserState> {
  return (await loadState({ store }, userDecider, userStreamId(tenant, userId))).state;
}

/** Only whether the user was deleted: no personal data and no password material to remember. */
const deletion = {
  initialState: () => false,
  evolve: (deleted: boolean, event: UserEvent) => deleted || event.type === 'UserDeleted' || event.type === 'UserErased',
};

/**
 * Whether the user's stream records a deletion, folded from the events after the ones this
 * instance folded last: a check made at every login reads no history (and decrypts none).
 */
export async function isUserDeleted(store: EventStore, tenant: string, userId: string): Promise<boolean> {
  return (await loadState({ store }, deletion, userStreamId(tenant, userId))).state;
}

/** A password change as the sessions it ends need it: the version it made, and the session it kept. */
export interface PasswordChange {
  version: number;
  revision: bigint;
  reason: PasswordChangeReason;
  keptSessionId?: string;
}

/** Every password change of the user, oldest first (read only when a session's password may be stale). */
export async function passwordChangesOf(store: EventStore, tenant: string, userId: string): Promise<PasswordChange[]> {
  const changes: PasswordChange[] = [];
  for (const event of await store.readStream(userStreamId(tenant, userId))) {
    if (event.type !== 'UserPasswordChanged') continue;
    const { reason, keptSessionId } = event.data as UserPasswordChanged['data'];
    changes.push({ version: changes.length + 1, revision: event.revision, reason, ...(keptSessionId && { keptSessionId }) });
  }
  return changes;
}
