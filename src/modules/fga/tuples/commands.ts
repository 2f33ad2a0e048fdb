import type { CommandContext } from '../../../platform/commands/context.ts';
import { validationError } from '../../../platform/errors.ts';
import { reportWrite } from '../../../platform/projections/read-your-writes.ts';
import { noActiveModel, translated } from '../app-errors.ts';
import type { ActiveModel } from '../serving/active-models.ts';
import type { RelationTuple } from '../tuple.ts';
import { tupleToString } from '../tuple.ts';
import { validateTuple } from '../tuple-validation.ts';
import type { TenantTupleWriter } from './tenant-writer.ts';

export interface TupleCommandDeps {
  writer: TenantTupleWriter;
  activeModel(tenant: string): Promise<ActiveModel | null>;
}

export interface TupleChanges {
  writes: RelationTuple[];
  deletes: RelationTuple[];
}

function rejectRepeats(changes: TupleChanges): void {
  const seen = new Set<string>();
  for (const tuple of [...changes.writes, ...changes.deletes]) {
    const text = tupleToString(tuple);
    if (seen.has(text)) throw validationError(`Tuple '${text}' appears more than once in the request`);
    seen.add(text);
  }
}

/**
 * Writes and deletes of relation tuples, validated then applied atomically as one event: every
 * write against the tenant's active model, read once per request (NO_ACTIVE_MODEL, INVALID_TYPE,
 * INVALID_RELATION, INVALID_SUBJECT_TYPE), every write on an existing tuple TUPLE_EXISTS, and one
 * failure rejects the whole request. Deletes need no model: a tuple written under an older model
 * can always be removed, and deleting an absent tuple is a no-op.
 */
export function tupleCommands(deps: TupleCommandDeps) {
  return {
    async apply(tenant: string, changes: TupleChanges, context: CommandContext) {
      rejectRepeats(changes);
      let modelId: string | undefined;
      if (changes.writes.length > 0) {
        const model = await deps.activeModel(tenant);
        if (!model) throw noActiveModel();
        translated(() => changes.writes.forEach((tuple) => validateTuple(model.typesystem, tuple)));
        modelId = model.modelId;
      }
      const { event, position } = await deps.writer.submit(tenant, { type: 'ChangeTuples', ...changes, modelId }, context);
      // Appended in a group with other requests: the write is this request's all the same.
      if (event) reportWrite({ position, types: [event.type] });
      const deleted = event?.type === 'FgaTuplesChanged' ? event.data.deletes.length : 0;
      return { written: changes.writes.length, deleted, position };
    },
  };
}

export type TupleCommands = ReturnType<typeof tupleCommands>;
