import type { CheckRequest, CheckResult } from '../engine/authorization-engine.ts';
import type { MemoryTupleStore } from '../engine/memory-tuple-store.ts';
import type { TypeSystem } from '../typesystem.ts';

interface Kept {
  store: MemoryTupleStore;
  typesystem: TypeSystem;
  version: number;
  result: CheckResult;
}

/** The question, unambiguously whatever its text holds: each field after its length. */
const keyOf = (tenant: string, request: CheckRequest): string => {
  const { objectType, objectId, relation, subjectType, subjectId, subjectRelation } = request;
  const userset = subjectRelation === undefined ? '-' : `${subjectRelation.length}:${subjectRelation}`;
  return `${tenant.length}:${tenant}${objectType.length}:${objectType}${objectId.length}:${objectId}${relation.length}:${relation}${subjectType.length}:${subjectType}${subjectId.length}:${subjectId}${userset}`;
};

/**
 * Recent check answers, the cache before local evaluation of design.md (OpenFGA keeps one too). An
 * answer holds only for the tenant's index it was computed over, at that index's version, and the
 * model it was computed with: a tuple written or deleted in the tenant, another active model or a
 * reloaded index makes it stale, and a stale answer is computed again, never returned. Only plain
 * checks are kept: not with contextual tuples, nor with explain (the tree is what it asks for). An
 * invalid request throws before anything is kept, and a key names one question only, so a kept
 * answer is the engine's answer to this very question over this very index.
 */
export class CheckAnswers {
  /**
   * Two generations instead of one map that drops its oldest entry: a Map keeps deleted entries as
   * holes until it grows, so finding the oldest after many deletions walks them all (15 µs a miss
   * when full). Answers go into `recent`; when it holds half the capacity it becomes `older` and the
   * previous `older` is dropped; an answer found in `older` moves back into `recent`.
   */
  private recent = new Map<string, Kept>();
  private older = new Map<string, Kept>();

  /** `capacity`: answers kept at most, every tenant together (a key of about a hundred characters and a small entry each); 0 keeps none. */
  constructor(private readonly capacity: number) {}

  /** The kept answer when still valid, else `evaluate`'s (kept when it answered without a promise). */
  answer(
    tenant: string,
    typesystem: TypeSystem,
    store: MemoryTupleStore,
    request: CheckRequest,
    evaluate: () => CheckResult | Promise<CheckResult>,
  ): CheckResult | Promise<CheckResult> {
    if (this.capacity === 0 || request.explain || request.contextualTuples?.length) return evaluate();
    const key = keyOf(tenant, request);
    const version = store.version;
    let known = this.recent.get(key);
    if (known === undefined) {
      known = this.older.get(key);
      if (known !== undefined) this.keep(key, known);
    }
    if (known !== undefined && known.store === store && known.typesystem === typesystem && known.version === version) return known.result;
    const result = evaluate();
    if (result instanceof Promise) return result;
    if (known !== undefined) {
      known.store = store;
      known.typesystem = typesystem;
      known.version = version;
      known.result = result;
    } else {
      this.keep(key, { store, typesystem, version, result });
    }
    return result;
  }

  private keep(key: string, kept: Kept): void {
    if (this.recent.size >= this.capacity / 2) {
      this.older = this.recent;
      this.recent = new Map();
    }
    this.recent.set(key, kept);
  }
}
