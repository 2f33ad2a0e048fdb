import type { CommandContext } from '../../../platform/commands/context.ts';
import { handleBatchCommand } from '../../../platform/commands/handle-batch-command.ts';
import type { CommandDeps } from '../../../platform/commands/handle-command.ts';
import { validationError } from '../../../platform/errors.ts';
import { noActiveModel, translated } from '../app-errors.ts';
import type { ActiveModel } from '../serving/active-models.ts';
import type { RelationTuple } from '../tuple.ts';
import { tupleToString } from '../tuple.ts';
import { validateTuple } from '../tuple-validation.ts';
import { tupleDecider, type TupleCommand } from './decider.ts';
import { tupleStreamId } from './events.ts';

export interface TupleCommandDeps extends CommandDeps {
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
 * Writes and deletes of relation tuples, validated then applied atomically: every write against
 * the tenant's active model (NO_ACTIVE_MODEL, INVALID_TYPE, INVALID_RELATION, INVALID_SUBJECT_TYPE),
 * every write on an existing tuple TUPLE_EXISTS, and one failure rejects the whole request.
 * Deletes need no model: a tuple written under an older model can always be removed, and deleting
 * an absent tuple is a no-op.
 */
export function tupleCommands(deps: TupleCommandDeps) {
  return {
    async apply(tenant: string, changes: TupleChanges, context: CommandContext) {
      rejectRepeats(changes);
      const writes: TupleCommand[] = [];
      if (changes.writes.length > 0) {
        const model = await deps.activeModel(tenant);
        if (!model) throw noActiveModel();
        for (const tuple of changes.writes) {
          translated(() => validateTuple(model.typesystem, tuple));
          writes.push({ type: 'WriteTuple', tuple, modelId: model.modelId });
        }
      }
      const deletes = changes.deletes.map((tuple): TupleCommand => ({ type: 'DeleteTuple', tuple }));
      const items = [...writes, ...deletes].map((command) => ({ streamId: tupleStreamId(tenant, command.tuple), command }));
      const { events, position } = await handleBatchCommand(deps, tupleDecider, items, context);
      const deleted = events.slice(writes.length).filter((decided) => decided.length > 0).length;
      return { written: writes.length, deleted, position };
    },
  };
}

export type TupleCommands = ReturnType<typeof tupleCommands>;
