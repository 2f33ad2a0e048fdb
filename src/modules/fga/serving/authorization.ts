import { validationError } from '../../../platform/errors.ts';
import { asDomainError, fgaError, noActiveModel } from '../app-errors.ts';
import type { CheckRequest, CheckResult, ExpandRequest, ListObjectsRequest } from '../engine/authorization-engine.ts';
import { AuthorizationEngine } from '../engine/authorization-engine.ts';
import type { MemoryTupleStore } from '../engine/memory-tuple-store.ts';
import type { TypeSystem } from '../typesystem.ts';
import type { ActiveModel, ActiveModels } from './active-models.ts';
import { CheckAnswers } from './check-answers.ts';
import type { TupleIndexes } from './tuple-indexes.ts';

export interface AuthorizationDeps {
  models: ActiveModels;
  indexes: TupleIndexes;
  /** How long a query waits for the index to reach its consistency token. */
  consistencyTimeoutMs: number;
  /** The event store's newest committed position: a token above it was never issued. */
  lastWrittenPosition: () => Promise<bigint>;
  /** Check answers kept at most (CheckAnswers; 0: every check evaluated). */
  checkAnswersKept: number;
}

const TOKEN_NEVER_ISSUED = 'no write answered with this consistency token';

export const consistencyTimeout = () =>
  fgaError('CONSISTENCY_TIMEOUT', 'The authorization index has not yet reached the consistency token; retry shortly', undefined, 1);

/**
 * A valid model can chain thousands of computed usersets on one object; such a resolution can
 * exhaust the stack before it counts 25 hops. It is too deep all the same.
 */
export function evaluationError(error: unknown): never {
  if (error instanceof RangeError && error.message.includes('call stack')) {
    throw fgaError('MAX_DEPTH_EXCEEDED', 'resolution nests too deeply for this model');
  }
  return asDomainError(error);
}

/**
 * Check, expand and list-objects of a tenant, answered from its in-memory index with its active
 * model. `atLeast` (a consistency token: a write's global position) makes the answer at least as
 * fresh as that write; the wait is bounded, and a token not reached in time is an error rather
 * than an answer that might ignore the write.
 */
export function authorizationQueries(deps: AuthorizationDeps) {
  const answers = new CheckAnswers(deps.checkAnswersKept);
  /**
   * Waits for the index to reach a token. A token past every committed write is the client's
   * mistake (400), not a wait that might end: only a token some write answered with is waited for.
   */
  async function reach(atLeast: bigint): Promise<void> {
    if (atLeast <= deps.indexes.position.current) return;
    if (atLeast > (await deps.lastWrittenPosition())) {
      throw validationError(TOKEN_NEVER_ISSUED, [{ path: 'body.consistencyToken', message: TOKEN_NEVER_ISSUED }]);
    }
    if (!(await deps.indexes.waitFor(atLeast, deps.consistencyTimeoutMs))) throw consistencyTimeout();
  }

  /**
   * `use` of the tenant's active model and index: without a promise when both are loaded and the
   * consistency token (if any) is reached, the common case of every check.
   */
  function withIndex<T>(tenant: string, atLeast: bigint | undefined, use: (typesystem: TypeSystem, store: MemoryTupleStore) => T | Promise<T>): T | Promise<T> {
    if (atLeast !== undefined && atLeast > deps.indexes.position.current) return reach(atLeast).then(() => withIndex(tenant, undefined, use));
    const model = deps.models.current(tenant);
    if (model instanceof Promise) return model.then((loaded) => withModel(tenant, loaded, use), asDomainError);
    return withModel(tenant, model, use);
  }

  const withModel = <T>(tenant: string, model: ActiveModel | null, use: (typesystem: TypeSystem, store: MemoryTupleStore) => T | Promise<T>): T | Promise<T> => {
    if (!model) throw noActiveModel();
    const store = deps.indexes.loadedStoreOf(tenant);
    return store instanceof Promise ? store.then((loaded) => use(model.typesystem, loaded)) : use(model.typesystem, store);
  };

  const engineFor = (tenant: string, atLeast: bigint | undefined) =>
    withIndex(tenant, atLeast, (typesystem, store) => new AuthorizationEngine(typesystem, store));

  const answerCheck = (engine: AuthorizationEngine, request: CheckRequest): CheckResult | Promise<CheckResult> => {
    try {
      const answer = engine.answerCheck(request);
      return answer instanceof Promise ? answer.catch(evaluationError) : answer;
    } catch (error) {
      return evaluationError(error);
    }
  };

  return {
    /** Without a promise when everything it needs is in memory (see withIndex); an invalid request throws. */
    check(tenant: string, request: CheckRequest, atLeast?: bigint): CheckResult | Promise<CheckResult> {
      return withIndex(tenant, atLeast, (typesystem, store) =>
        answers.answer(tenant, typesystem, store, request, () => answerCheck(new AuthorizationEngine(typesystem, store), request)),
      );
    },

    async expand(tenant: string, request: ExpandRequest, atLeast?: bigint) {
      return (await engineFor(tenant, atLeast)).expand(request).catch(evaluationError);
    },

    async listObjects(tenant: string, request: ListObjectsRequest, atLeast?: bigint) {
      const objectIds = await (await engineFor(tenant, atLeast)).listObjects(request).catch(evaluationError);
      return { objectIds, total: objectIds.length };
    },
  };
}

export type AuthorizationQueries = ReturnType<typeof authorizationQueries>;
