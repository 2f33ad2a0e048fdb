import type { Clock } from '../../../platform/clock.ts';
import type { Pool } from '../../../platform/db/pool.ts';
import { validationError } from '../../../platform/errors.ts';
import type { EventStore } from '../../../platform/eventstore/port.ts';
import { asDomainError, noActiveModel } from '../app-errors.ts';
import { AuthorizationEngine, type CheckRequest, type ListObjectsRequest } from '../engine/authorization-engine.ts';
import type { ActiveModels } from './active-models.ts';
import { consistencyTimeout, evaluationError } from './authorization.ts';
import { TupleHistoryReader } from './tuple-history.ts';

export interface AuthorizationAsOfDeps {
  store: EventStore;
  pool: Pool;
  clock: Clock;
  models: ActiveModels;
  /** Whether the tuple history read model has applied the log up to `position` (bounded wait). */
  historyReached: (position: bigint) => Promise<boolean>;
  /** Whether this instance's log follower, which drops cached models on model events, has passed `position`. */
  modelEventsSeen: (position: bigint) => Promise<boolean>;
}

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

  async function beganAt(tenant: string): Promise<Date | null> {
    const known = beginnings.get(tenant);
    if (known) return known;
    const [first] = await deps.store.readTenantEvents({ tenantId: tenant }, 1);
    if (!first) return null;
    const began = new Date(first.metadata.occurredAt);
    beginnings.set(tenant, began);
    return began;
  }

  async function engineAt(tenant: string, at: Date): Promise<AuthorizationEngine> {
    if (at > deps.clock.now()) throw asOfError('must not be in the future');
    const began = await beganAt(tenant);
    if (!began || at < began) throw asOfError(`must not be before the tenant existed (${began?.toISOString() ?? 'no events yet'})`);
    const head = await deps.store.headPosition();
    const reached = await Promise.all([deps.historyReached(head), deps.modelEventsSeen(head)]);
    if (!reached.every(Boolean)) throw consistencyTimeout();
    const model = await deps.models.at(tenant, at).catch(asDomainError);
    if (!model) throw noActiveModel();
    return new AuthorizationEngine(model.typesystem, new TupleHistoryReader(deps.pool, tenant, at));
  }

  return {
    async check(tenant: string, request: CheckRequest, at: Date) {
      return (await engineAt(tenant, at)).check(request).catch(evaluationError);
    },

    async listObjects(tenant: string, request: ListObjectsRequest, at: Date) {
      const objectIds = await (await engineAt(tenant, at)).listObjects(request).catch(evaluationError);
      return { objectIds, total: objectIds.length };
    },
  };
}

export type AuthorizationAsOf = ReturnType<typeof authorizationAsOf>;
