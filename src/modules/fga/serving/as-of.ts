import type { Clock } from '../../../platform/clock.ts';
import type { Pool } from '../../../platform/db/pool.ts';
import { validationError } from '../../../platform/errors.ts';
import type { EventStore } from '../../../platform/eventstore/port.ts';
import { asDomainError, noActiveModel } from '../app-errors.ts';
import { AuthorizationEngine, type CheckRequest, type ListObjectsRequest } from '../engine/authorization-engine.ts';
import type { MemoryTupleStore } from '../engine/memory-tuple-store.ts';
import type { TupleReader } from '../engine/tuple-reader.ts';
import { FGA_TUPLE_EVENT_TYPES } from '../tuples/events.ts';
import type { ActiveModels } from './active-models.ts';
import { consistencyTimeout, evaluationError } from './authorization.ts';
import { TupleHistoryReader } from './tuple-history.ts';
import { foldLogTail, IndexMovedOn, OverlayTupleReader, RecentTupleChanges } from './tuple-overlay.ts';

export interface AuthorizationAsOfDeps {
  store: EventStore;
  pool: Pool;
  clock: Clock;
  models: ActiveModels;
  /** Whether the tuple history read model has applied the log up to `position` (bounded wait). */
  historyReached: (position: bigint) => Promise<boolean>;
  /** Whether this instance's log follower, which drops cached models on model events, has passed `position`. */
  modelEventsSeen: (position: bigint) => Promise<boolean>;
  /** The live in-memory tuple index that follower keeps (the same one live checks read). */
  liveIndex: { storeOf: (tenant: string) => Promise<MemoryTupleStore>; position: () => bigint };
  /**
   * Up to how many tuple changes since the instant an asOf query is answered from the live index
   * with those changes undone (a recent instant), rather than by looking every step up in the
   * history; 0 always looks up the history.
   */
  recentChangesLimit: number;
}

/** Reads of the log's tail before giving up on the overlay while the live index keeps moving past it. */
const OVERLAY_ATTEMPTS = 3;
/** Tuple events past the kept lifetimes' checkpoint beyond which they are read again from the history. */
const LONGEST_TAIL = 1000;

const asOfError = (message: string) => validationError(message, [{ path: 'body.asOf', message }]);

/**
 * Check and list-objects as they would have answered at a past instant: the same engine, with the
 * model the tenant had active then (its models stream folded up to the instant) and the tuples
 * that stood then (their lifetimes in fga_tuple_history). The history read model and the model
 * cache first pass what the log held when the query arrived, so an instant already past is complete.
 */
export function authorizationAsOf(deps: AuthorizationAsOfDeps) {
  /** When each tenant began: its first event (creation), which never changes. */
  const beginnings = new Map<string, Date>();
  const recentChanges = new RecentTupleChanges(deps.pool, deps.recentChangesLimit);

  async function beganAt(tenant: string): Promise<Date | null> {
    const known = beginnings.get(tenant);
    if (known) return known;
    const [first] = await deps.store.readTenantEvents({ tenantId: tenant }, 1);
    if (!first) return null;
    const began = new Date(first.metadata.occurredAt);
    beginnings.set(tenant, began);
    return began;
  }

  /**
   * The live index with the changes since `at` undone: the history's lifetimes changed since then,
   * and the tenant's tuple events past the history's checkpoint up to a log position the index has
   * not passed (the index may already hold them). Null when too much changed since `at`.
   */
  async function overlaidAt(tenant: string, at: Date): Promise<TupleReader | null> {
    const changes = await recentChanges.since(tenant, at);
    if (!changes) return null;
    const index = await deps.liveIndex.storeOf(tenant);
    // Tuples the history saw unchanged since `at` are read from the index: it must hold them.
    if (!(await deps.modelEventsSeen(changes.checkpoint))) throw consistencyTimeout();
    for (let attempt = 0; attempt < OVERLAY_ATTEMPTS; attempt += 1) {
      const bound = deps.liveIndex.position() <= changes.checkpoint ? changes.checkpoint : await deps.store.headPosition();
      const tail =
        bound > changes.checkpoint
          ? (await deps.store.readTenantEvents({ tenantId: tenant, types: FGA_TUPLE_EVENT_TYPES, after: changes.checkpoint }, deps.recentChangesLimit + 1)).filter(
              (event) => event.position <= bound,
            )
          : [];
      if (tail.length > LONGEST_TAIL) recentChanges.forget(tenant);
      if (changes.overlay.size + tail.length > deps.recentChangesLimit) return null;
      if (deps.liveIndex.position() > bound) continue;
      const overlay = new Map(changes.overlay);
      foldLogTail(overlay, tail, at);
      return new OverlayTupleReader(index, overlay, deps.liveIndex.position, bound);
    }
    return null;
  }

  async function engineAt(tenant: string, at: Date, overlay: boolean): Promise<AuthorizationEngine> {
    if (at > deps.clock.now()) throw asOfError('must not be in the future');
    const began = await beganAt(tenant);
    if (!began || at < began) throw asOfError(`must not be before the tenant existed (${began?.toISOString() ?? 'no events yet'})`);
    const head = await deps.store.headPosition();
    const reached = await Promise.all([deps.historyReached(head), deps.modelEventsSeen(head)]);
    if (!reached.every(Boolean)) throw consistencyTimeout();
    const model = await deps.models.at(tenant, at).catch(asDomainError);
    if (!model) throw noActiveModel();
    const reader = (overlay && deps.recentChangesLimit > 0 && (await overlaidAt(tenant, at))) || new TupleHistoryReader(deps.pool, tenant, at);
    return new AuthorizationEngine(model.typesystem, reader);
  }

  /** Runs `query` on the engine as of `at`; once the live index moved past an overlay mid-query, again from the history. */
  async function evaluate<T>(tenant: string, at: Date, query: (engine: AuthorizationEngine) => Promise<T>): Promise<T> {
    const engine = await engineAt(tenant, at, true);
    try {
      return await query(engine);
    } catch (error) {
      if (!(error instanceof IndexMovedOn)) return evaluationError(error);
    }
    return query(await engineAt(tenant, at, false)).catch(evaluationError);
  }

  return {
    async check(tenant: string, request: CheckRequest, at: Date) {
      return evaluate(tenant, at, (engine) => engine.check(request));
    },

    async listObjects(tenant: string, request: ListObjectsRequest, at: Date) {
      const objectIds = await evaluate(tenant, at, (engine) => engine.listObjects(request));
      return { objectIds, total: objectIds.length };
    },
  };
}

export type AuthorizationAsOf = ReturnType<typeof authorizationAsOf>;
