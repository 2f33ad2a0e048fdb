import { FgaError } from './errors.ts';
import type { FgaErrorCode } from './errors.ts';
import { relationReferenceToString } from './schema.ts';
import type { RelationTuple } from './tuple.ts';
import { WILDCARD_ID, isValidId, subjectOf, tupleToString } from './tuple.ts';
import type { TypeSystem } from './typesystem.ts';
import { subjectKind } from './typesystem.ts';

// The tuple's text only for a refusal: a bulk write validates 100 tuples a request.
function refuse(tuple: RelationTuple, code: FgaErrorCode, message: string): never {
  const text = tupleToString(tuple);
  throw new FgaError(code, `invalid tuple '${text}': ${message}`, text);
}

/**
 * Checks a tuple against a model before it is written (or used as a contextual tuple): the
 * object's type and relation exist, and the relation's type restrictions allow the subject
 * (`user`, `user:*` or `group#member`). Errors carry the tuple's text.
 */
export function validateTuple(typesystem: TypeSystem, tuple: RelationTuple): void {
  if (!isValidId(tuple.objectId) || tuple.objectId === WILDCARD_ID) {
    refuse(tuple, 'VALIDATION_ERROR', 'the object id is not valid');
  }
  if (!isValidId(tuple.subjectId)) refuse(tuple, 'VALIDATION_ERROR', 'the subject id is not valid');
  if (tuple.subjectId === WILDCARD_ID && tuple.subjectRelation !== undefined) {
    refuse(tuple, 'VALIDATION_ERROR', 'a wildcard cannot have a relation');
  }
  if (!typesystem.hasType(tuple.objectType)) refuse(tuple, 'INVALID_TYPE', `type '${tuple.objectType}' is not defined`);
  const definition = typesystem.relation(tuple.objectType, tuple.relation);
  if (!definition) refuse(tuple, 'INVALID_RELATION', `relation '${tuple.objectType}#${tuple.relation}' is not defined`);
  if (!typesystem.hasType(tuple.subjectType)) {
    refuse(tuple, 'INVALID_SUBJECT_TYPE', `subject type '${tuple.subjectType}' is not defined`);
  }
  const subject = subjectOf(tuple);
  if (!definition.allowsSubject(subject)) {
    const allowed = definition.directlyRelatedUserTypes.map(relationReferenceToString);
    refuse(
      tuple,
      'INVALID_SUBJECT_TYPE',
      `'${subjectKind(subject)}' is not allowed on '${tuple.objectType}#${tuple.relation}'` +
        (allowed.length > 0 ? ` (allowed: ${allowed.join(', ')})` : ' (it is not directly assignable)'),
    );
  }
}
