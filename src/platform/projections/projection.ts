import type { PoolClient } from '../db/pool.ts';
import type { RecordedEvent } from '../eventstore/port.ts';

export type ProjectionHandler = (event: RecordedEvent, tx: PoolClient) => Promise<void>;
/** Applies a run of consecutive events of one type (in position order) with a few statements. */
export type ProjectionBatchHandler = (events: RecordedEvent[], tx: PoolClient) => Promise<void>;

/**
 * A read model declared as data. Handlers run inside the transaction that also moves the
 * projection's checkpoint, so the rows and the checkpoint never disagree. Handlers must derive
 * every value from the event (no now(), no random ids): a rebuild then gives identical rows.
 */
export interface Projection {
  name: string;
  /** Tables the projection owns (created by its migration); a rebuild empties them. */
  tables: string[];
  handlers: Partial<Record<string, ProjectionHandler>>;
  /**
   * Event types handled in runs instead (hot types, one round trip per run rather than per event):
   * the effect must equal applying the events one by one. A type is in one map or the other.
   */
  batchHandlers?: Partial<Record<string, ProjectionBatchHandler>>;
}

export function defineProjection(projection: Projection): Projection {
  return projection;
}

/** Whether events of `type` change the projection's read model (one by one or in runs). */
export const handles = (projection: Projection, type: string): boolean =>
  Boolean(projection.handlers[type] ?? projection.batchHandlers?.[type]);

/**
 * Applies events in order. Events the projection ignores are skipped first, so a run of one
 * batch-handled type is not cut by them (a UserCreated run survives interleaved reservations).
 */
export async function applyEvents(projection: Projection, events: RecordedEvent[], tx: PoolClient): Promise<void> {
  const { handlers, batchHandlers = {} } = projection;
  const handled = events.filter((event) => handles(projection, event.type));
  for (let start = 0; start < handled.length; ) {
    const { type } = handled[start]!;
    const batch = batchHandlers[type];
    let end = start + 1;
    if (batch) {
      while (end < handled.length && handled[end]!.type === type) end += 1;
      await batch(handled.slice(start, end), tx);
    } else {
      await handlers[type]!(handled[start]!, tx);
    }
    start = end;
  }
}
