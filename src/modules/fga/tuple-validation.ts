import { FgaError } from './errors.ts';
import type { FgaErrorCode } from './errors.ts';
import { relationReferenceToString } from './schema.ts';
import type { RelationTuple } from './tuple.ts';
import { WILDCARD_ID, isValidId, subjectOf, tupleToString } from './tuple.ts';
import type { TypeSystem } from './typesystem.ts';
import { subjectKind } from './typesystem.ts';

/**
 * Checks a tuple against a model before it is written (or used as a contextual tuple): the
 * object's type and relation exist, and the relation's type restrictions allow the subject
 * (`user`, `user:*` or `group#member`). Errors carry the tuple's text.
 */
export function validateTuple(typesystem: TypeSystem, tuple: RelationTuple): void {
  const text = tupleToString(tuple);
  function fail(code: FgaErrorCode, message: string): never {
    throw new FgaError(code, `invalid tuple '${text}': ${message}`, text);
  }
  if (!isValidId(tuple.objectId) || tuple.objectId === WILDCARD_ID) {
    fail('VALIDATION_ERROR', 'the object id is not valid');
  }
  if (!isValidId(tuple.subjectId)) fail('VALIDATION_ERROR', 'the subject id is not valid');
  if (tuple.subjectId === WILDCARD_ID && tuple.subjectRelation !== undefined) {
    fail('VALIDATION_ERROR', 'a wildcard cannot have a relation');
  }
  if (!typesystem.hasType(tuple.objectType)) fail('INVALID_TYPE', `type '${tuple.objectType}' is not defined`);
  const definition = typesystem.relation(tuple.objectType, tuple.relation);
  if (!definition) fail('INVALID_RELATION', `relation '${tuple.objectType}#${tuple.relation}' is not defined`);
  if (!typesystem.hasType(tuple.subjectType)) {
    fail('INVALID_SUBJECT_TYPE', `subject type '${tuple.subjectType}' is not defined`);
  }
  const subject = subjectOf(tuple);
  if (!definition.allowsSubject(subject)) {
    const allowed = definition.directlyRelatedUserTypes.map(relationReferenceToString);
    fail(
      'INVALID_SUBJECT_TYPE',
      `'${subjectKind(subject)}' is not allowed on '${tuple.objectType}#${tuple.relation}'` +
        (allowed.length > 0 ? ` (allowed: ${allowed.join(', ')})` : ' (it is not directly assignable)'),
    );
  }
}
