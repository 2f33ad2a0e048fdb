import type { DomainEvent } from '../../../platform/commands/decider.ts';
import type { RelationTuple } from '../tuple.ts';
import { tupleToString } from '../tuple.ts';

/** modelId: the active model the tuple was validated against when written. */
export type FgaTupleWritten = DomainEvent<'FgaTupleWritten', { tuple: RelationTuple; modelId: string }>;
export type FgaTupleDeleted = DomainEvent<'FgaTupleDeleted', { tuple: RelationTuple }>;

export type FgaTupleEvent = FgaTupleWritten | FgaTupleDeleted;

/**
 * One stream per tuple, named by its text form: "this tuple exists" is then decided on the
 * tuple's own revision, so two racing writes of the same tuple cannot both succeed (TUPLE_EXISTS),
 * without a read-model check and without one hot stream per tenant.
 */
export const tupleStreamId = (tenant: string, tuple: RelationTuple): string => `fgatuple-${tenant}.${tupleToString(tuple)}`;
