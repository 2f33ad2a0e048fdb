import { fold } from '../../platform/commands/decider.ts';
import type { EventStore } from '../../platform/eventstore/port.ts';
import { userDecider, type UserState } from './decider.ts';
import { userStreamId, type UserEvent } from './events.ts';

/** The user aggregate's current state, from its stream (the write side, never a read model). */
export async function loadUser(store: EventStore, tenant: string, userId: string): Promise<UserState> {
  return fold(userDecider, (await store.readStream(userStreamId(tenant, userId))) as unknown as UserEvent[]);
}
