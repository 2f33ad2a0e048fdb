import type { PoolClient } from '../db/pool.ts';
import type { RecordedEvent } from '../eventstore/port.ts';

export type ProjectionHandler = (event: RecordedEvent, tx: PoolClient) => Promise<void>;

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
}

export function defineProjection(projection: Projection): Projection {
  return projection;
}
