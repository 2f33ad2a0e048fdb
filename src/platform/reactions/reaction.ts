import type { CommandContext } from '../commands/context.ts';
import type { RecordedEvent } from '../eventstore/port.ts';

export interface ReactionContext {
  /** The context of every command issued for the event: actor system, caused by it, in its correlation and tenant. */
  command: CommandContext;
  /**
   * Resolves once the named read models have applied the triggering event (throws after a bounded
   * wait, and the event is retried): targets read from them then include everything before it.
   */
  readModelsPassed(names: string[]): Promise<void>;
}

/** Turns one event into commands; resolves to the highest position they appended (0n when none). */
export type ReactionHandler = (event: RecordedEvent, context: ReactionContext) => Promise<bigint>;

/**
 * A process manager declared as data: a name (its checkpoint) and one handler per event type.
 * Delivery is at least once (the checkpoint moves after the commands succeeded), so every command
 * a handler issues must be idempotent: the decider answers "nothing to do" the second time.
 */
export interface Reaction {
  name: string;
  handlers: Partial<Record<string, ReactionHandler>>;
  /**
   * Per event type, a check made before the reaction's transaction, without its lock: true when the
   * event surely needs no command (its handler would issue none), from what this instance knows in
   * memory. A batch whose every handled event passes its check is passed like a batch with nothing
   * to react to (no transaction); otherwise the batch is reacted to as usual.
   */
  nothingToDo?: Partial<Record<string, (event: RecordedEvent, context: ReactionContext) => Promise<boolean>>>;
}

export function defineReaction(reaction: Reaction): Reaction {
  return reaction;
}

/** Commands caused by `event` run as the system, in the event's tenant and correlation. */
export function reactionContextOf(event: RecordedEvent): CommandContext {
  return {
    tenantId: event.metadata.tenantId,
    actor: 'system',
    correlationId: event.metadata.correlationId ?? null,
    causationId: event.id,
  };
}

/** Issues one command per target, one after another; resolves to the highest position appended. */
export async function commandEach<Target>(targets: Target[], command: (target: Target) => Promise<{ position: bigint }>): Promise<bigint> {
  let last = 0n;
  for (const target of targets) {
    const { position } = await command(target);
    if (position > last) last = position;
  }
  return last;
}
