import type { RelationTuple, SubjectFields } from '../tuple.ts';
import { subjectOf } from '../tuple.ts';
import type { TypeSystem } from '../typesystem.ts';
import type { CheckOptions } from './check.ts';
import { CheckResolver, DEFAULT_MAX_DEPTH } from './check.ts';
import { withContextualTuples } from './contextual-reader.ts';
import type { ExpandNode } from './expand.ts';
import { expandRelation } from './expand.ts';
import { listObjects } from './list-objects.ts';
import { isPromise } from './maybe-async.ts';
import { Outcome } from './outcome.ts';
import { requireObjectId, requireRelation, requireSubject, requireValidTuples } from './request-validation.ts';
import type { ResolutionNode } from './resolution.ts';
import { compactResolution } from './resolution.ts';
import type { TupleReader } from './tuple-reader.ts';

export interface CheckRequest extends SubjectFields {
  objectType: string;
  objectId: string;
  relation: string;
  /** Tuples that count as written for this request only. */
  contextualTuples?: readonly RelationTuple[];
  /** Return the resolution tree. */
  explain?: boolean;
}

export interface CheckResult {
  allowed: boolean;
  resolution?: ResolutionNode;
}

// A check without a resolution tree has two answers, made once and frozen: the HTTP route then
// writes each once (src/platform/http/zod-compilers.ts) instead of checking and writing it per check.
const DEFAULT_OPTIONS: CheckOptions = Object.freeze({ maxDepth: DEFAULT_MAX_DEPTH });

const ALLOWED: CheckResult = Object.freeze({ allowed: true });
const DENIED: CheckResult = Object.freeze({ allowed: false });

function checkResult(outcome: Outcome, trace: ResolutionNode[] | undefined): CheckResult {
  const root = trace?.[0];
  if (!root) return outcome === Outcome.allowed ? ALLOWED : DENIED;
  return { allowed: outcome === Outcome.allowed, resolution: compactResolution(root) };
}

export interface ExpandRequest {
  objectType: string;
  objectId: string;
  relation: string;
  contextualTuples?: readonly RelationTuple[];
}

export interface ListObjectsRequest extends SubjectFields {
  objectType: string;
  relation: string;
  contextualTuples?: readonly RelationTuple[];
}

/**
 * Check, expand and list-objects for one model over one tenant's tuples. Cheap to create: make one
 * per request or keep one per tenant and active model. Requests are validated against the model
 * (INVALID_TYPE, INVALID_RELATION, VALIDATION_ERROR, and the tuple codes for contextual tuples);
 * resolution deeper than `maxDepth` dispatches fails with MAX_DEPTH_EXCEEDED.
 */
export class AuthorizationEngine {
  private readonly options: CheckOptions;

  constructor(
    readonly typesystem: TypeSystem,
    private readonly reader: TupleReader,
    options?: Partial<CheckOptions>,
  ) {
    // One engine is made per HTTP check: the defaults are not copied for it.
    this.options = options?.maxDepth === undefined ? DEFAULT_OPTIONS : { maxDepth: options.maxDepth };
  }

  async check(request: CheckRequest): Promise<CheckResult> {
    return this.answerCheck(request);
  }

  /**
   * The check's answer, without a promise when the reader answered synchronously (the in-memory
   * index): the HTTP check's path. An invalid request throws.
   */
  answerCheck(request: CheckRequest): CheckResult | Promise<CheckResult> {
    requireRelation(this.typesystem, request.objectType, request.relation);
    requireObjectId(request.objectId);
    const subject = subjectOf(request);
    requireSubject(this.typesystem, subject);
    requireValidTuples(this.typesystem, request.contextualTuples);
    const reader = withContextualTuples(this.reader, request.contextualTuples);
    const resolver = new CheckResolver(this.typesystem, reader, subject, this.options);
    const trace: ResolutionNode[] | undefined = request.explain ? [] : undefined;
    const resolved = resolver.resolve(request.objectType, request.objectId, request.relation, 0, trace);
    return isPromise(resolved) ? resolved.then((outcome) => checkResult(outcome, trace)) : checkResult(resolved, trace);
  }

  async expand(request: ExpandRequest): Promise<{ tree: ExpandNode }> {
    const definition = requireRelation(this.typesystem, request.objectType, request.relation);
    requireObjectId(request.objectId);
    requireValidTuples(this.typesystem, request.contextualTuples);
    const reader = withContextualTuples(this.reader, request.contextualTuples);
    return { tree: await expandRelation(this.typesystem, reader, definition, request.objectId) };
  }

  /** Bare ids (`d1`, not `document:d1`), sorted, without duplicates. */
  async listObjects(request: ListObjectsRequest): Promise<string[]> {
    requireRelation(this.typesystem, request.objectType, request.relation);
    const subject = subjectOf(request);
    requireSubject(this.typesystem, subject);
    requireValidTuples(this.typesystem, request.contextualTuples);
    const reader = withContextualTuples(this.reader, request.contextualTuples);
    return listObjects(this.typesystem, reader, request.objectType, request.relation, subject, this.options);
  }
}
