import type { Queryable } from '../../../platform/db/pool.ts';
import type { RelationTuple } from '../tuple.ts';
import { rowToTuple, TUPLE_COLUMNS, type TupleRow } from './rows.ts';

export interface TupleFilter {
  objectType?: string | undefined;
  objectId?: string | undefined;
  relation?: string | undefined;
  subjectType?: string | undefined;
  subjectId?: string | undefined;
}

export type StoredTuple = RelationTuple & { createdAt: string };

/** The history's object index order (migration 0019): a page of a tenant's or an object's tuples walks it. */
const LIST_ORDER = 'object_type, object_id, relation, subject_type, subject_relation, subject_id';

const COLUMNS: Record<keyof TupleFilter, string> = {
  objectType: 'object_type',
  objectId: 'object_id',
  relation: 'relation',
  subjectType: 'subject_type',
  subjectId: 'subject_id',
};

/**
 * Filtered tuple lists (fga_tuples: the open lifetimes of fga_tuple_history). Every filter is an
 * equality, so a filter on the object side uses the history's object index and one on the subject
 * side its subject index; results come in the object index's order (one open lifetime a tuple), so
 * pages are stable.
 */
export function tupleQueries(db: Queryable) {
  return {
    async list(tenant: string, filter: TupleFilter, page: { page: number; limit: number }) {
      const params: unknown[] = [tenant];
      const where = ['tenant_id = $1'];
      for (const [field, column] of Object.entries(COLUMNS) as [keyof TupleFilter, string][]) {
        const value = filter[field];
        if (value === undefined) continue;
        params.push(value);
        where.push(`${column} = $${params.length}`);
      }
      const condition = where.join(' and ');
      const [{ rows }, counted] = await Promise.all([
        db.query<TupleRow & { created_at: Date }>(
          `select ${TUPLE_COLUMNS}, created_at from fga_tuples where ${condition}
            order by ${LIST_ORDER}
            limit ${page.limit} offset ${(page.page - 1) * page.limit}`,
          params,
        ),
        db.query<{ total: string }>(`select count(*) as total from fga_tuples where ${condition}`, params),
      ]);
      const items: StoredTuple[] = rows.map((row) => ({ ...rowToTuple(row), createdAt: row.created_at.toISOString() }));
      return { items, total: Number(counted.rows[0]?.total ?? 0) };
    },
  };
}

export type TupleQueries = ReturnType<typeof tupleQueries>;
