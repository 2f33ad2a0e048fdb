import type { RelationTuple } from '../tuple.ts';
import type { MaybePromise } from './maybe-async.ts';

// Readers may answer synchronously (the in-memory index) or asynchronously (SQL).
export type { MaybePromise };

/** Subjects of one kind on one object#relation: `document:1#viewer@group:?#member`. */
export interface SubjectIdsQuery {
  objectType: string;
  objectId: string;
  relation: string;
  subjectType: string;
  /** Absent: plain objects of subjectType, the wildcard id `*` included. */
  subjectRelation?: string;
}

/** Objects of one type related by one relation to exactly one subject: `document:?#viewer@user:anne`. */
export interface ObjectIdsQuery {
  objectType: string;
  relation: string;
  subjectType: string;
  /** Exact match: `*` finds only tuples written with the wildcard. */
  subjectId: string;
  subjectRelation?: string;
}

/**
 * The engine's only access to stored tuples (one tenant, one store). Each method is one indexed
 * lookup, so a SQL implementation is three SELECTs over
 * (object_type, object_id, relation, subject_type, subject_relation) and
 * (subject_type, subject_id, subject_relation, object_type, relation) indexes.
 * The engine filters what it asks by the active model's type restrictions, so tuples written
 * under older models are ignored without the reader knowing about models.
 */
export interface TupleReader {
  readSubjectIds(query: SubjectIdsQuery): MaybePromise<Iterable<string>>;
  readObjectIds(query: ObjectIdsQuery): MaybePromise<Iterable<string>>;
  hasTuple(tuple: RelationTuple): MaybePromise<boolean>;
}
