import { FGA_HISTORY_PROJECTION } from '../src/modules/fga/index.ts';
import { defineProjection } from '../src/platform/projections/projection.ts';
import { KEY_TYPES, keyColumns } from './fga.ts';

/**
 * Read model `fga_tuple_history` (migration 0018): each tuple's lifetimes, so check and
 * list-objects can answer as the tuples stood at any instant. Times are the events' occurredAt.
 */
export const fgaHistoryProjection = defineProjection({
  name: FGA_HISTORY_PROJECTION,
  tables: ['fga_tuple_history'],
  handlers: {},
  batchHandlers: {
    FgaTupleWritten: async (events, tx) => {
      await tx.query(
        `insert into fga_tuple_history
           (tenant_id, object_type, object_id, relation, subject_type, subject_id, subject_relation, written_position, written_at)
         select * from unnest(${KEY_TYPES}, $8::bigint[], $9::timestamptz[])
         on conflict do nothing`,
        [...keyColumns(events), events.map((event) => event.position.toString()), events.map((event) => event.metadata.occurredAt)],
      );
    },
    // A tuple is deleted only while it stands (its stream decides): the deletion ends its open lifetime.
    FgaTupleDeleted: async (events, tx) => {
      await tx.query(
        `update fga_tuple_history h set deleted_at = k.deleted_at
           from unnest(${KEY_TYPES}, $8::timestamptz[])
                as k(tenant_id, object_type, object_id, relation, subject_type, subject_id, subject_relation, deleted_at)
          where h.tenant_id = k.tenant_id and h.object_type = k.object_type and h.object_id = k.object_id and h.relation = k.relation
            and h.subject_type = k.subject_type and h.subject_id = k.subject_id and h.subject_relation = k.subject_relation
            and h.deleted_at is null`,
        [...keyColumns(events), events.map((event) => event.metadata.occurredAt)],
      );
    },
  },
});
