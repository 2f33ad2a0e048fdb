import { FgaError } from './errors.ts';

/** A relationship: `objectType:objectId#relation@subjectType:subjectId[#subjectRelation]`. */
export interface RelationTuple {
  objectType: string;
  objectId: string;
  relation: string;
  subjectType: string;
  /** `*` is the typed wildcard: every subject of `subjectType`. */
  subjectId: string;
  /** Makes the subject a userset: every subject that has this relation with subjectType:subjectId. */
  subjectRelation?: string;
}

/** The "user" side of a tuple or of a query. */
export interface Subject {
  type: string;
  id: string;
  relation?: string;
}

export const WILDCARD_ID = '*';

/** The subject fields of a tuple or of a query. */
export type SubjectFields = Pick<RelationTuple, 'subjectType' | 'subjectId' | 'subjectRelation'>;

export function subjectOf(fields: SubjectFields): Subject {
  return fields.subjectRelation === undefined
    ? { type: fields.subjectType, id: fields.subjectId }
    : { type: fields.subjectType, id: fields.subjectId, relation: fields.subjectRelation };
}

export function subjectToString(subject: Subject): string {
  const base = `${subject.type}:${subject.id}`;
  return subject.relation === undefined ? base : `${base}#${subject.relation}`;
}

/** subjectToString of a tuple's or query's subject fields, built directly (no Subject in between: a check's audit entry writes one). */
export function subjectFieldsToString(fields: SubjectFields): string {
  const base = `${fields.subjectType}:${fields.subjectId}`;
  return fields.subjectRelation === undefined ? base : `${base}#${fields.subjectRelation}`;
}

// Built directly (no Subject in between): bulk writes key every tuple by its text several times.
export function tupleToString(tuple: RelationTuple): string {
  const object = `${tuple.objectType}:${tuple.objectId}#${tuple.relation}@${tuple.subjectType}:${tuple.subjectId}`;
  return tuple.subjectRelation === undefined ? object : `${object}#${tuple.subjectRelation}`;
}

// Ids may hold anything but the separators of the text form and whitespace (as OpenFGA's).
const ID_PATTERN = /^[^\s:#]+$/;

export function isValidId(id: string): boolean {
  return ID_PATTERN.test(id);
}

/** Parses `type:id` or `type:id#relation` (the textual subject form). */
export function parseSubject(text: string): Subject {
  const colon = text.indexOf(':');
  const hash = text.indexOf('#', colon + 1);
  const type = text.slice(0, Math.max(colon, 0));
  const id = hash < 0 ? text.slice(colon + 1) : text.slice(colon + 1, hash);
  const relation = hash < 0 ? undefined : text.slice(hash + 1);
  if (colon <= 0 || !isValidId(id) || relation === '' || /[\s:#@]/.test(type) || /[\s:#@]/.test(relation ?? '')) {
    throw new FgaError('VALIDATION_ERROR', `'${text}' is not a subject of the form type:id or type:id#relation`);
  }
  return relation === undefined ? { type, id } : { type, id, relation };
}

/** Parses `type:id` (an object, never a wildcard or userset). */
export function parseObject(text: string): { type: string; id: string } {
  const subject = parseSubject(text);
  if (subject.relation !== undefined || subject.id === WILDCARD_ID) {
    throw new FgaError('VALIDATION_ERROR', `'${text}' is not an object of the form type:id`);
  }
  return { type: subject.type, id: subject.id };
}

/** Parses the textual tuple form `objectType:objectId#relation@subjectType:subjectId[#subjectRelation]`. */
export function parseTuple(text: string): RelationTuple {
  const hash = text.indexOf('#');
  const at = text.indexOf('@', hash + 1);
  if (hash < 0 || at < 0) {
    throw new FgaError('VALIDATION_ERROR', `'${text}' is not a tuple of the form type:id#relation@type:id`);
  }
  const relation = text.slice(hash + 1, at);
  if (relation === '' || /\s/.test(relation)) {
    throw new FgaError('VALIDATION_ERROR', `'${text}' has an invalid relation`);
  }
  return fromParts(parseObject(text.slice(0, hash)), relation, parseSubject(text.slice(at + 1)));
}

/** Builds a tuple from its three parts (object, relation, subject). */
export function fromParts(object: { type: string; id: string }, relation: string, subject: Subject): RelationTuple {
  const tuple: RelationTuple = {
    objectType: object.type,
    objectId: object.id,
    relation,
    subjectType: subject.type,
    subjectId: subject.id,
  };
  if (subject.relation !== undefined) tuple.subjectRelation = subject.relation;
  return tuple;
}
