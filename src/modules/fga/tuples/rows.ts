import type { RelationTuple } from '../tuple.ts';

/** A row of the fga_tuples read model (migration 0030: the open lifetimes of fga_tuple_history); subject_relation is '' for a plain subject. */
export interface TupleRow {
  object_type: string;
  object_id: string;
  relation: string;
  subject_type: string;
  subject_id: string;
  subject_relation: string;
}

export const TUPLE_COLUMNS = 'object_type, object_id, relation, subject_type, subject_id, subject_relation';

export function rowToTuple(row: TupleRow): RelationTuple {
  const tuple: RelationTuple = {
    objectType: row.object_type,
    objectId: row.object_id,
    relation: row.relation,
    subjectType: row.subject_type,
    subjectId: row.subject_id,
  };
  if (row.subject_relation !== '') tuple.subjectRelation = row.subject_relation;
  return tuple;
}
