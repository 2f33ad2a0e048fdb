import { FgaError } from '../errors.ts';
import type { RelationTuple, Subject } from '../tuple.ts';
import { WILDCARD_ID, isValidId } from '../tuple.ts';
import { validateTuple } from '../tuple-validation.ts';
import type { RelationDefinition, TypeSystem } from '../typesystem.ts';

/** The queried object#relation must exist in the model (INVALID_TYPE / INVALID_RELATION). */
export function requireRelation(typesystem: TypeSystem, objectType: string, relation: string): RelationDefinition {
  if (!typesystem.hasType(objectType)) {
    throw new FgaError('INVALID_TYPE', `type '${objectType}' is not defined in the model`);
  }
  const definition = typesystem.relation(objectType, relation);
  if (!definition) {
    throw new FgaError('INVALID_RELATION', `relation '${objectType}#${relation}' is not defined in the model`);
  }
  return definition;
}

export function requireObjectId(objectId: string): void {
  if (!isValidId(objectId) || objectId === WILDCARD_ID) {
    throw new FgaError('VALIDATION_ERROR', `'${objectId}' is not a valid object id`);
  }
}

/**
 * The subject's type (and userset relation) must exist; it need not be allowed anywhere: a subject
 * the model never relates simply has no access.
 */
export function requireSubject(typesystem: TypeSystem, subject: Subject): void {
  if (!isValidId(subject.id)) throw new FgaError('VALIDATION_ERROR', `'${subject.id}' is not a valid subject id`);
  if (!typesystem.hasType(subject.type)) {
    throw new FgaError('INVALID_TYPE', `subject type '${subject.type}' is not defined in the model`);
  }
  if (subject.relation === undefined) return;
  if (subject.id === WILDCARD_ID) throw new FgaError('VALIDATION_ERROR', 'a wildcard subject cannot have a relation');
  if (!typesystem.relation(subject.type, subject.relation)) {
    const userset = `${subject.type}#${subject.relation}`;
    throw new FgaError('INVALID_RELATION', `subject relation '${userset}' is not defined in the model`);
  }
}

/** Contextual tuples obey the same rules as written ones. */
export function requireValidTuples(typesystem: TypeSystem, tuples: readonly RelationTuple[] | undefined): void {
  if (tuples) for (const tuple of tuples) validateTuple(typesystem, tuple);
}
