import { z } from 'zod';
import { defineEvent, type EventOf } from '../../../platform/events/define-event.ts';
import type { RelationTuple } from '../tuple.ts';
import { tupleToString } from '../tuple.ts';

/** The fields of a relation tuple as events record them and the API answers them. */
export const relationTupleFields = {
  objectType: z.string(),
  objectId: z.string(),
  relation: z.string(),
  subjectType: z.string(),
  subjectId: z.string(),
  subjectRelation: z.string().optional(),
};
const relationTuple: z.ZodType<RelationTuple> = z.strictObject(relationTupleFields);

export const fgaTupleWritten = defineEvent({
  type: 'FgaTupleWritten',
  description: 'modelId: the active model the tuple was validated against when written.',
  data: z.strictObject({ tuple: relationTuple, modelId: z.string() }),
});
export const fgaTupleDeleted = defineEvent({ type: 'FgaTupleDeleted', data: z.strictObject({ tuple: relationTuple }) });

export const fgaTupleEvents = [fgaTupleWritten, fgaTupleDeleted];
export const FGA_TUPLE_EVENT_TYPES = fgaTupleEvents.map((definition) => definition.type);

export type FgaTupleWritten = EventOf<typeof fgaTupleWritten>;
export type FgaTupleDeleted = EventOf<typeof fgaTupleDeleted>;
export type FgaTupleEvent = EventOf<(typeof fgaTupleEvents)[number]>;

/**
 * One stream per tuple, named by its text form: "this tuple exists" is then decided on the
 * tuple's own revision, so two racing writes of the same tuple cannot both succeed (TUPLE_EXISTS),
 * without a read-model check and without one hot stream per tenant.
 */
export const tupleStreamId = (tenant: string, tuple: RelationTuple): string => `fgatuple-${tenant}.${tupleToString(tuple)}`;
