import type { RecordedEvent } from '../eventstore/port.ts';

/** Events a follower may pass without saving its checkpoint when it has nothing to do for them. */
const MAX_UNSAVED_EVENTS = 5000;

/**
 * Which batches a checkpointed follower of the log (a projection, a reaction) may pass without a
 * transaction: those it has nothing to do for, until the passed span grows so long that a restart
 * would read much again; such a batch is then applied, and its checkpoint saved, all the same.
 */
export class IdleBatches {
  private unsaved = 0;

  constructor(private readonly handles: (type: string) => boolean) {}

  /**
   * True: pass the batch without a transaction. False: apply it and save the checkpoint. `nothingToDo`:
   * the follower found that its events it handles need nothing done (a reaction's own check).
   */
  pass(events: readonly RecordedEvent[], nothingToDo = false): boolean {
    if ((!nothingToDo && events.some((event) => this.handles(event.type))) || this.unsaved + events.length >= MAX_UNSAVED_EVENTS) {
      this.unsaved = 0;
      return false;
    }
    this.unsaved += events.length;
    return true;
  }
}
