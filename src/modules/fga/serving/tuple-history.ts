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
  /** One query's answers by lookup: a check reaches the same lookup by several paths (editor and viewer from parent). */
  private readonly answered = new Map<string, Promise<string[]>>();

  constructor(
    private readonly pool: Pool,
    private readonly tenant: string,
    at: Date,
  ) {
    this.at = at.toISOString();
  }

  private ids(column: 'subject_id' | 'object_id', where: string, values: string[]): Promise<string[]> {
    const key = JSON.stringify([column, values]);
    let answer = this.answered.get(key);
    if (!answer) {
      answer = this.pool
        .query<{ id: string }>(`select distinct ${column} as id from fga_tuple_history where tenant_id = $1 and ${where} and ${STOOD}`, [this.tenant, this.at, ...values])
        .then(({ rows }) => rows.map((row) => row.id));
      this.answered.set(key, answer);
    }
    return answer;
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

  /** From the tuple's subjects of its kind: a check asks both of one object, and the answer is shared. */
  async hasTuple(tuple: RelationTuple): Promise<boolean> {
    return (await this.readSubjectIds(tuple)).includes(tuple.subjectId);
  }
}
