import type pg from 'pg';
import type { PoolClient } from '../db/pool.ts';
import type { RecordedEvent } from '../eventstore/port.ts';

export type ProjectionHandler = (event: RecordedEvent, tx: PoolClient) => Promise<void>;
/** Applies a run of consecutive events of one type (in position order) with a few statements. */
export type ProjectionBatchHandler = (events: RecordedEvent[], tx: PoolClient) => Promise<void>;
/** A statement as the pg client takes it: text, values, and a name when it is prepared once per connection. */
export type Statement = pg.QueryConfig<unknown[]>;
/**
 * The statements that apply a run of consecutive events of one type (in position order), run in
 * the order given: they read nothing, so all of them can be sent before any answer comes back.
 */
export type ProjectionBatchWrites = (events: RecordedEvent[]) => Statement[];

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
  /**
   * Event types handled in runs by statements that read nothing: a batch made only of these (and of
   * ignored events) is sent whole with its transaction's opening and closing (checkpointedBatches).
   * A type is in one of the three maps at most.
   */
  batchWrites?: Partial<Record<string, ProjectionBatchWrites>>;
}

export function defineProjection(projection: Projection): Projection {
  return projection;
}

/** Whether events of `type` change the projection's read model (one by one or in runs). */
export const handles = (projection: Projection, type: string): boolean =>
  Boolean(projection.handlers[type] ?? projection.batchHandlers?.[type] ?? projection.batchWrites?.[type]);

/**
 * The events the projection handles, in order, cut where they are applied apart: a run of one
 * batch-handled type (batchHandlers or batchWrites), or a single event of a one-by-one type. Events
 * the projection ignores are skipped first, so a run is not cut by them (a UserCreated run survives
 * interleaved reservations).
 */
function* runs(projection: Projection, events: RecordedEvent[]): Generator<RecordedEvent[]> {
  const { batchHandlers = {}, batchWrites = {} } = projection;
  const handled = events.filter((event) => handles(projection, event.type));
  for (let start = 0; start < handled.length; ) {
    const { type } = handled[start]!;
    let end = start + 1;
    if (batchHandlers[type] ?? batchWrites[type]) while (end < handled.length && handled[end]!.type === type) end += 1;
    yield handled.slice(start, end);
    start = end;
  }
}

/** Runs statements of batchWrites in order on the transaction. */
export async function runWrites(statements: readonly Statement[], tx: PoolClient): Promise<void> {
  for (const statement of statements) await tx.query(statement);
}

/** Applies events in order. */
export async function applyEvents(projection: Projection, events: RecordedEvent[], tx: PoolClient): Promise<void> {
  const { handlers, batchHandlers = {}, batchWrites = {} } = projection;
  for (const run of runs(projection, events)) {
    const { type } = run[0]!;
    const writes = batchWrites[type];
    if (writes) await runWrites(writes(run), tx);
    else if (batchHandlers[type]) await batchHandlers[type](run, tx);
    else await handlers[type]!(run[0]!, tx);
  }
}

/** The statements that apply `events` (as applyEvents would), or null when one of them is handled otherwise than by batchWrites. */
export function writesOf(projection: Projection, events: RecordedEvent[]): Statement[] | null {
  if (!projection.batchWrites) return null;
  const statements: Statement[] = [];
  for (const run of runs(projection, events)) {
    const writes = projection.batchWrites?.[run[0]!.type];
    if (!writes) return null;
    statements.push(...writes(run));
  }
  return statements;
}
