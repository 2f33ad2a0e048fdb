import { WrongExpectedVersionError } from '../eventstore/errors.ts';
import type { StreamAppend } from '../eventstore/port.ts';
import type { CommandContext } from './context.ts';
import { fold, type Decider, type DomainEvent } from './decider.ts';
import { jitter, lastPosition, MAX_ATTEMPTS, toNewEvents, type CommandDeps } from './handle-command.ts';

export interface BatchItem<Command> {
  streamId: string;
  command: Command;
}

export interface BatchResult<Event> {
  /** The events decided for each item, in the items' order (empty for a no-op). */
  events: Event[][];
  /**
   * Global position of the last appended event; when nothing changed, of the newest event already
   * in the items' streams (what a reader must have seen to observe the same state), 0n if none.
   */
  position: bigint;
}

/**
 * Decides one command per stream (many small aggregates, such as relation tuples) and appends every
 * resulting event in one transaction: all items apply or none. A decision that throws rejects the
 * whole batch before anything is written. A concurrent writer on any of the streams makes the
 * append fail, and the whole batch is decided again on fresh state.
 */
export async function handleBatchCommand<State, Command, Event extends DomainEvent>(
  deps: CommandDeps,
  decider: Decider<State, Command, Event>,
  items: BatchItem<Command>[],
  context: CommandContext,
): Promise<BatchResult<Event>> {
  const streamIds = new Set(items.map((item) => item.streamId));
  for (let attempt = 1; ; attempt += 1) {
    const recorded = await deps.store.readStreams(items.map((item) => item.streamId));
    const events = items.map((item, i) => decider.decide(item.command, fold(decider, recorded[i] as unknown as Event[])));
    const appends: StreamAppend[] = items.flatMap((item, i) => {
      const decided = events[i]!;
      const last = recorded[i]!.at(-1);
      if (decided.length === 0) return [];
      return [{ streamId: item.streamId, expectedRevision: last ? last.revision : 'no_stream', events: toNewEvents(decided, context, deps.clock) }];
    });
    if (appends.length === 0) return { events, position: lastPosition(recorded.flatMap((stream) => stream.slice(-1))) };
    try {
      return { events, position: lastPosition(await deps.store.appendMulti(appends)) };
    } catch (error) {
      const conflict = error instanceof WrongExpectedVersionError && streamIds.has(error.streamId);
      if (!conflict || attempt >= MAX_ATTEMPTS) throw error;
      await jitter(attempt);
    }
  }
}
