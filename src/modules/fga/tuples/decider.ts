import type { Decider } from '../../../platform/commands/decider.ts';
import { fgaError } from '../app-errors.ts';
import type { RelationTuple } from '../tuple.ts';
import { tupleToString } from '../tuple.ts';
import { tupleChangesOf, type FgaTupleEvent, type FgaTuplesChanged } from './events.ts';

/** The tuples that exist in a tenant. The service hands the decider its in-memory index. */
export interface TupleSet {
  has(tuple: RelationTuple): boolean;
}

/** A set with changes laid over another (which is left as it is); a lookup names its tuple once however deep the layers. */
class ChangedTuples implements TupleSet {
  constructor(
    private readonly base: TupleSet,
    private readonly changed: ReadonlyMap<string, boolean>,
  ) {}

  has(tuple: RelationTuple): boolean {
    return this.hasKeyed(tupleToString(tuple), tuple);
  }

  private hasKeyed(key: string, tuple: RelationTuple): boolean {
    const changed = this.changed.get(key);
    if (changed !== undefined) return changed;
    return this.base instanceof ChangedTuples ? this.base.hasKeyed(key, tuple) : this.base.has(tuple);
  }
}

function withChanges(base: TupleSet, changes: Iterable<{ tuple: RelationTuple; written: boolean }>): TupleSet {
  const changed = new Map<string, boolean>();
  for (const change of changes) changed.set(tupleToString(change.tuple), change.written);
  return new ChangedTuples(base, changed);
}

const NO_TUPLES: TupleSet = { has: () => false };

/**
 * One request's tuple changes, already validated (no tuple twice, writes against the active model).
 * Writing an existing tuple is TUPLE_EXISTS and rejects the whole request; deleting an absent tuple
 * succeeds and records nothing (the spec's idempotent delete).
 */
export interface ChangeTuples {
  type: 'ChangeTuples';
  writes: RelationTuple[];
  deletes: RelationTuple[];
  modelId?: string;
}

/** A tenant's tuples (stream `fgatuples-<tenant>`, folded over the tuples recorded in their own streams before it). */
export const tenantTuplesDecider: Decider<TupleSet, ChangeTuples, FgaTupleEvent> = {
  initialState: () => NO_TUPLES,

  evolve: (state, event) => withChanges(state, tupleChangesOf(event)),

  decide(command, state) {
    const existing = command.writes.find((tuple) => state.has(tuple));
    if (existing) throw fgaError('TUPLE_EXISTS', `Tuple '${tupleToString(existing)}' already exists`);
    const deletes = command.deletes.filter((tuple) => state.has(tuple));
    if (command.writes.length === 0 && deletes.length === 0) return [];
    const data: FgaTuplesChanged['data'] = command.writes.length > 0 ? { modelId: command.modelId, writes: command.writes, deletes } : { writes: [], deletes };
    return [{ type: 'FgaTuplesChanged', data }];
  },
};
