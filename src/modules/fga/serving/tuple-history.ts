import type { Pool } from '../../../platform/db/pool.ts';
import type { ObjectIdsQuery, SubjectIdsQuery, TupleReader } from '../engine/tuple-reader.ts';
import type { RelationTuple } from '../tuple.ts';

/** The projection that writes fga_tuple_history (projections/fga-history.ts). */
export const FGA_HISTORY_PROJECTION = 'fga-history';

/** A lifetime that covers the instant $2 (a write at or before it, no deletion at or before it). */
const STOOD = 'written_at <= $2 and (deleted_at is null or deleted_at > $2)';

/**
 * The tenant's tuples as they stood at one instant, for the authorization engine: each of its
 * lookups is one indexed query of the tuple lifetimes (migration 0018).
 */
export class TupleHistoryReader implements TupleReader {
  private readonly at: string;

  constructor(
    private readonly pool: Pool,
    private readonly tenant: string,
    at: Date,
  ) {
    this.at = at.toISOString();
  }

  private async ids(column: 'subject_id' | 'object_id', where: string, values: string[]): Promise<string[]> {
    const { rows } = await this.pool.query<{ id: string }>(
      `select distinct ${column} as id from fga_tuple_history where tenant_id = $1 and ${where} and ${STOOD}`,
      [this.tenant, this.at, ...values],
    );
    return rows.map((row) => row.id);
  }

  readSubjectIds(query: SubjectIdsQuery): Promise<string[]> {
    return this.ids(
      'subject_id',
      'object_type = $3 and object_id = $4 and relation = $5 and subject_type = $6 and subject_relation = $7',
      [query.objectType, query.objectId, query.relation, query.subjectType, query.subjectRelation ?? ''],
    );
  }

  readObjectIds(query: ObjectIdsQuery): Promise<string[]> {
    return this.ids(
      'object_id',
      'subject_type = $3 and subject_id = $4 and subject_relation = $5 and object_type = $6 and relation = $7',
      [query.subjectType, query.subjectId, query.subjectRelation ?? '', query.objectType, query.relation],
    );
  }

  async hasTuple(tuple: RelationTuple): Promise<boolean> {
    const found = await this.ids(
      'subject_id',
      'object_type = $3 and object_id = $4 and relation = $5 and subject_type = $6 and subject_relation = $7 and subject_id = $8',
      [tuple.objectType, tuple.objectId, tuple.relation, tuple.subjectType, tuple.subjectRelation ?? '', tuple.subjectId],
    );
    return found.length > 0;
  }
}
