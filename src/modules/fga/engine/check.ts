import { FgaError } from '../errors.ts';
import type { RewriteNode } from '../schema.ts';
import type { RelationTuple, Subject } from '../tuple.ts';
import { WILDCARD_ID, tupleToString } from '../tuple.ts';
import { SUBJECT_ITSELF, type RelationDefinition, type TYPED_WILDCARD, type TypeSystem } from '../typesystem.ts';
import type { MaybePromise } from './maybe-async.ts';
import { andThen, isPromise } from './maybe-async.ts';
import { Outcome, allOf, anyOf, butNot } from './outcome.ts';
import type { ResolutionNode, Trace } from './resolution.ts';
import { closeNode, openNode, recordOutcome } from './resolution.ts';
import type { SubjectIdsQuery, TupleReader } from './tuple-reader.ts';

export const DEFAULT_MAX_DEPTH = 25;

/** Marks an object#relation being evaluated on the current path. */
const ON_PATH = -1;

/**
 * Resolutions nested on one path at most. Dispatches are limited to maxDepth, but computed
 * usersets on one object are not (as in OpenFGA), so a valid model can chain thousands of them;
 * such a resolution is too deep all the same, and answering it before the stack runs out keeps
 * the explained tree small enough to serialize (docs/performance.md, FGA check session 10).
 */
const MAX_PATH_LENGTH = 500;

export interface CheckOptions {
  /** Dispatches (userset and tuple-to-userset hops) allowed on one path; OpenFGA's resolve node limit. */
  maxDepth: number;
}

type TupleToUserset = Extract<RewriteNode, { type: 'tupleToUserset' }>;
type SetOperation = Extract<RewriteNode, { type: 'union' | 'intersection' | 'exclusion' }>;

/**
 * Answers "does the subject have relation R on object O?" for one subject, with OpenFGA's
 * semantics. One instance serves one request: it memoizes every sub-answer for its subject, so
 * list-objects can verify many candidates cheaply. Evaluation is sequential and short-circuits;
 * it stays synchronous as long as the reader answers synchronously.
 */
export class CheckResolver {
  /**
   * Per object id, a slot per relation of the model (RelationDefinition.index): the answer of
   * object#relation once known (memo), ON_PATH while it is being evaluated (cycle detection), or
   * undefined. One small array per object instead of a map per relation: a check touches a few
   * objects, and every map costs allocations and hashing on the hot path.
   */
  private readonly seen = new Map<string, (Outcome | typeof ON_PATH | undefined)[]>();
  /** Resolutions on the current path. */
  private pathLength = 0;

  constructor(
    private readonly typesystem: TypeSystem,
    private readonly reader: TupleReader,
    private readonly subject: Subject,
    private readonly options: CheckOptions,
  ) {}

  /** `depth` counts dispatches so far; pass a trace to record an explanation. */
  resolve(objectType: string, objectId: string, relation: string, depth: number, trace?: Trace): MaybePromise<Outcome> {
    return this.resolveDefinition(this.typesystem.relation(objectType, relation), objectId, depth, trace);
  }

  /** resolve, the relation found already (none: denied). */
  private resolveDefinition(definition: RelationDefinition | undefined, objectId: string, depth: number, trace: Trace): MaybePromise<Outcome> {
    if (!definition) return Outcome.denied;
    const { objectType, name: relation } = definition;
    const slots = this.slotsOf(objectId);
    const seen = slots[definition.index];
    if (seen !== undefined && seen !== ON_PATH) {
      return noted(trace, definition, objectId, seen, 'evaluated earlier in this check');
    }
    if (depth >= this.options.maxDepth) {
      throw new FgaError(
        'MAX_DEPTH_EXCEEDED',
        `resolution exceeded the maximum depth of ${this.options.maxDepth} at ${objectType}:${objectId}#${relation}`,
      );
    }
    if (seen === ON_PATH) {
      return noted(trace, definition, objectId, Outcome.deniedByCycle, 'cycle detected');
    }
    const subject = this.subject;
    if (subject.relation === relation && subject.id === objectId && subject.type === objectType) {
      return noted(trace, definition, objectId, Outcome.allowed, 'the subject is this userset');
    }
    if (this.pathLength >= MAX_PATH_LENGTH) throw new FgaError('MAX_DEPTH_EXCEEDED', 'resolution nests too deeply for this model');
    const index = definition.index;
    slots[index] = ON_PATH;
    this.pathLength += 1;
    // No closures while the reader answers synchronously (this runs a dozen times a check).
    let outcome: MaybePromise<Outcome>;
    try {
      outcome = this.evaluate(definition, definition.rewrite, objectId, depth, trace);
    } catch (error) {
      this.settle(slots, index, Outcome.deniedByCycle);
      throw error;
    }
    if (!isPromise(outcome)) return this.settle(slots, index, outcome);
    return outcome.then(
      (result) => this.settle(slots, index, result),
      (error: unknown) => {
        this.settle(slots, index, Outcome.deniedByCycle);
        throw error;
      },
    );
  }

  /** The object's memo slots, made when it is first met (slots stay in the map for the whole check). */
  private slotsOf(objectId: string): (Outcome | typeof ON_PATH | undefined)[] {
    let slots = this.seen.get(objectId);
    if (slots === undefined) {
      slots = new Array<Outcome | typeof ON_PATH | undefined>(this.typesystem.relationCount).fill(undefined);
      this.seen.set(objectId, slots);
    }
    return slots;
  }

  /**
   * Leaves the path; remembers the answer unless a cycle cut it (such answers depend on the path)
   * or it failed (settled as a cycle: nothing remembered).
   */
  private settle(slots: (Outcome | typeof ON_PATH | undefined)[], index: number, outcome: Outcome): Outcome {
    this.pathLength -= 1;
    slots[index] = outcome === Outcome.deniedByCycle ? undefined : outcome;
    return outcome;
  }

  private evaluate(
    definition: RelationDefinition,
    rewrite: RewriteNode,
    objectId: string,
    depth: number,
    trace: Trace,
  ): MaybePromise<Outcome> {
    // The closures of set operations live in their own method: a function that makes closures
    // allocates their context on every call, whichever case runs. (No named closures either: the
    // TypeScript loader wraps each in a costly name-keeping helper.)
    switch (rewrite.type) {
      case 'this':
        return this.direct(definition, objectId, depth, trace);
      case 'computedUserset': {
        // Only traces need the object's text; the fast path builds no strings.
        const node = trace && openNode(trace, 'computedUserset', rewrite.relation, `${definition.objectType}:${objectId}`);
        // Same object, other relation: no dispatch, so the depth does not grow (as in OpenFGA).
        const outcome = this.resolve(definition.objectType, objectId, rewrite.relation, depth, node?.children);
        return recordOutcome(node, outcome);
      }
      case 'tupleToUserset':
        return this.tupleToUserset(definition, rewrite, objectId, depth, trace);
      default:
        return this.setOperation(definition, rewrite, objectId, depth, trace);
    }
  }

  private setOperation(definition: RelationDefinition, rewrite: SetOperation, objectId: string, depth: number, trace: Trace): MaybePromise<Outcome> {
    const node = trace && openNode(trace, rewrite.type, definition.name, `${definition.objectType}:${objectId}`);
    const children = node?.children;
    switch (rewrite.type) {
      case 'union':
        return recordOutcome(node, anyOf(rewrite.children, (child) => this.evaluate(definition, child, objectId, depth, children)));
      case 'intersection':
        return recordOutcome(node, allOf(rewrite.children, (child) => this.evaluate(definition, child, objectId, depth, children)));
      case 'exclusion':
        return recordOutcome(
          node,
          butNot(
            () => this.evaluate(definition, rewrite.base, objectId, depth, children),
            () => this.evaluate(definition, rewrite.subtract, objectId, depth, children),
          ),
        );
    }
  }

  /** Tuples written on object#relation: the subject itself, a wildcard of its type, or usersets containing it. */
  private direct(definition: RelationDefinition, objectId: string, depth: number, trace: Trace): MaybePromise<Outcome> {
    const node = trace && openNode(trace, 'this', definition.name, `${definition.objectType}:${objectId}`);
    // Continuations are made only for a reader that answers later: the in-memory one answers now.
    const outcome = anyOf(definition.directSources(this.subject), (source) => {
      if (typeof source === 'string') {
        const tuple = this.grantingTuple(definition, objectId, source);
        const found = this.reader.hasTuple(tuple);
        return isPromise(found) ? found.then((stored) => grantedIf(stored, node, tuple)) : grantedIf(found, node, tuple);
      }
      const query = subjectsQuery(definition.objectType, objectId, definition.name, source.type, source.relation);
      return this.dispatchFound(this.reader.readSubjectIds(query), query, this.typesystem.relation(source.type, source.relation), depth, node);
    });
    return recordOutcome(node, outcome);
  }

  /** The tuple that would grant the subject directly: naming it, or its type's wildcard. */
  private grantingTuple(definition: RelationDefinition, objectId: string, source: typeof SUBJECT_ITSELF | typeof TYPED_WILDCARD): RelationTuple {
    const subject = this.subject;
    return source === SUBJECT_ITSELF
      ? tupleOf(definition.objectType, objectId, definition.name, subject.type, subject.id, subject.relation)
      : tupleOf(definition.objectType, objectId, definition.name, subject.type, WILDCARD_ID, undefined);
  }

  /** `computed from tupleset`: the subject's relation `computed` on every object written in `tupleset`. */
  private tupleToUserset(
    definition: RelationDefinition,
    rewrite: TupleToUserset,
    objectId: string,
    depth: number,
    trace: Trace,
  ): MaybePromise<Outcome> {
    const node = trace && openNode(trace, 'tupleToUserset', rewrite.tupleset, `${definition.objectType}:${objectId}`);
    // Only the parent types that define the computed relation (RelationDefinition.tuplesetTargets).
    const targets = definition.tuplesetTargets.get(rewrite) ?? [];
    const outcome = anyOf(targets, (target) => {
      const query = subjectsQuery(definition.objectType, objectId, rewrite.tupleset, target.objectType, undefined);
      return this.dispatchFound(this.reader.readSubjectIds(query), query, target, depth, node);
    });
    return recordOutcome(node, outcome);
  }

  /** dispatchEach over what a reader answered, now or later. */
  private dispatchFound(
    found: MaybePromise<Iterable<string>>,
    query: SubjectIdsQuery,
    target: RelationDefinition | undefined,
    depth: number,
    node: ResolutionNode | undefined,
  ): MaybePromise<Outcome> {
    if (isPromise(found)) return found.then((ids) => this.dispatchEach(ids, query, target, depth, node));
    return this.dispatchEach(found, query, target, depth, node);
  }

  /**
   * Checks `target` one dispatch deeper on each subject `query` found: a userset's own relation
   * (`group:eng` -> member), or a tuple-to-userset's computed relation on each parent (none: denied).
   * Notes on the trace which tuple led there.
   */
  private dispatchEach(
    ids: Iterable<string>,
    query: SubjectIdsQuery,
    target: RelationDefinition | undefined,
    depth: number,
    node: ResolutionNode | undefined,
  ): MaybePromise<Outcome> {
    return anyOf(ids, (id) => {
      // A wildcard names no object to dispatch to (and is invalid as a tupleset or userset subject).
      if (id === WILDCARD_ID) return Outcome.denied;
      const outcome = this.resolveDefinition(target, id, depth + 1, node?.children);
      if (!node) return outcome;
      const { objectType, objectId, relation: via, subjectType, subjectRelation } = query;
      const tuple = tupleOf(objectType, objectId, via, subjectType, id, subjectRelation);
      return andThen(outcome, (result) => (result === Outcome.allowed ? grantedBy(node, tuple) : result));
    });
  }
}

// Tuples and queries are built with one literal shape each (subjectRelation always present), so
// the reader's property reads stay monomorphic: spreads and optional keys cost several times more.
function tupleOf(
  objectType: string,
  objectId: string,
  relation: string,
  subjectType: string,
  subjectId: string,
  subjectRelation: string | undefined,
): RelationTuple {
  return { objectType, objectId, relation, subjectType, subjectId, subjectRelation };
}

function subjectsQuery(
  objectType: string,
  objectId: string,
  relation: string,
  subjectType: string,
  subjectRelation: string | undefined,
): SubjectIdsQuery {
  return { objectType, objectId, relation, subjectType, subjectRelation };
}

/** An answer found without evaluating the rewrite, shown on the trace as a leaf with the reason. */
function noted(trace: Trace, definition: RelationDefinition, id: string, outcome: Outcome, note: string): Outcome {
  if (!trace) return outcome; // memo hits are frequent: build nothing when not tracing
  const node = openNode(trace, definition.rewrite.type, definition.name, `${definition.objectType}:${id}`);
  if (node) node.note = note;
  return closeNode(node, outcome);
}

/** Allowed (noting the tuple on the trace) when the tuple is stored. */
function grantedIf(stored: boolean, node: ResolutionNode | undefined, tuple: RelationTuple): Outcome {
  return stored ? grantedBy(node, tuple) : Outcome.denied;
}

/** Marks the node with the tuple that granted access. */
function grantedBy(node: ResolutionNode | undefined, tuple: RelationTuple): Outcome {
  if (node) node.tupleFound = tupleToString(tuple);
  return Outcome.allowed;
}
