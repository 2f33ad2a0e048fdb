import type { RewriteNodeType } from '../schema.ts';
import type { MaybePromise } from './maybe-async.ts';
import { andThen } from './maybe-async.ts';
import { Outcome } from './outcome.ts';

/** One step of an explained check. */
export interface ResolutionNode {
  type: RewriteNodeType;
  /** The relation evaluated (for tupleToUserset: the tupleset relation that was read). */
  relation: string;
  /** The object, `type:id`. */
  object?: string;
  result: boolean;
  children?: ResolutionNode[];
  /** The tuple that granted access at this step. */
  tupleFound?: string;
  /**
   * Why the step ended without evaluating its rewrite: a cycle, a subject that is this very
   * userset, or an answer already found earlier in this check.
   */
  note?: string;
}

/**
 * Collects resolution nodes while a check runs with `explain`; without it every method is a
 * no-op on `undefined`, so the fast path builds nothing.
 */
export type Trace = ResolutionNode[] | undefined;

export function openNode(
  trace: Trace,
  type: RewriteNodeType,
  relation: string,
  object: string,
): ResolutionNode | undefined {
  if (!trace) return undefined;
  const node: ResolutionNode = { type, relation, object, result: false, children: [] };
  trace.push(node);
  return node;
}

/** Records the outcome on the node (if tracing) and passes it through. */
export function closeNode(node: ResolutionNode | undefined, outcome: Outcome): Outcome {
  if (node) node.result = outcome === Outcome.allowed;
  return outcome;
}

/** Records the outcome on the node once known; without a node the result passes through untouched. */
export function recordOutcome(node: ResolutionNode | undefined, result: MaybePromise<Outcome>): MaybePromise<Outcome> {
  return node ? andThen(result, (outcome) => closeNode(node, outcome)) : result;
}

/** Drops empty child lists so leaves read as leaves. */
export function compactResolution(node: ResolutionNode): ResolutionNode {
  if (node.children?.length === 0) delete node.children;
  node.children?.forEach(compactResolution);
  return node;
}
