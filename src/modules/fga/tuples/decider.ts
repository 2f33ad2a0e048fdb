import type { Decider } from '../../../platform/commands/decider.ts';
import { fgaError } from '../app-errors.ts';
import type { RelationTuple } from '../tuple.ts';
import { tupleToString } from '../tuple.ts';
import { tupleListsOf, type FgaTupleEvent, type FgaTuplesChanged } from './events.ts';

/** The tuples that exist in a tenant. The service hands the decider its in-memory index. */
export interface TupleSet {
  has(tuple: RelationTuple): boolean;
}

/** Layers a lookup may walk: a deeper stack (a writer's group of requests over its unindexed appends) is merged into one. */
const MAX_LAYERS = 8;

/** A set with changes laid over another (which is left as it is); a lookup names its tuple once however deep the layers. */
class ChangedTuples implements TupleSet {
  readonly layers: number;

  constructor(
    private readonly base: TupleSet,
    private readonly changed: ReadonlyMap<string, boolean>,
  ) {
    this.layers = base instanceof ChangedTuples ? base.layers + 1 : 1;
  }

  has(tuple: RelationTuple): boolean {
    return this.hasKeyed(tupleToString(tuple), tuple);
  }

  private hasKeyed(key: string, tuple: RelationTuple): boolean {
    const changed = this.changed.get(key);
    if (changed !== undefined) return changed;
    return this.base instanceof ChangedTuples ? this.base.hasKeyed(key, tuple) : this.base.has(tuple);
  }

  /** These changes over every layer's below them, in one map, over the set under all the layers. */
  merged(): { base: TupleSet; changed: Map<string, boolean> } {
    const below = this.base instanceof ChangedTuples ? this.base.merged() : { base: this.base, changed: new Map<string, boolean>() };
    for (const [key, written] of this.changed) below.changed.set(key, written);
    return below;
  }
}

/** Records an event's changes in `changed` (tuple text -> written), as evolving a state by it does. */
export function recordChanges(changed: Map<string, boolean>, event: FgaTupleEvent): void {
  const { writes, deletes } = tupleListsOf(event);
  for (const tuple of writes) changed.set(tupleToString(tuple), true);
  for (const tuple of deletes) changed.set(tupleToString(tuple), false);
}

function withChanges(state: TupleSet, event: FgaTupleEvent): TupleSet {
  const { base, changed } = state instanceof ChangedTuples && state.layers >= MAX_LAYERS ? state.merged() : { base: state, changed: new Map<string, boolean>() };
  recordChanges(changed, event);
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

  evolve: withChanges,

  decide(command, state) {
    const existing = command.writes.find((tuple) => state.has(tuple));
    if (existing) throw fgaError('TUPLE_EXISTS', `Tuple '${tupleToString(existing)}' already exists`);
    const deletes = command.deletes.filter((tuple) => state.has(tuple));
    if (command.writes.length === 0 && deletes.length === 0) return [];
    const data: FgaTuplesChanged['data'] = command.writes.length > 0 ? { modelId: command.modelId, writes: command.writes, deletes } : { writes: [], deletes };
    return [{ type: 'FgaTuplesChanged', data }];
  },
};
