import { readModelCache, type AppliedEventsSource } from '../projections/read-model-cache.ts';
import type { PublicEvent } from './port.ts';

/** The read models a consumer looks its targets up in (the projection runner). */
export interface FollowedReadModels extends AppliedEventsSource {
  waitFor(position: bigint, timeoutMs: number, names?: string[]): Promise<boolean>;
}

export interface TenantTargetsOptions<Target> {
  /** The projection whose read model holds the targets; a change it applies drops its tenant's entry. */
  projection: string;
  /** A tenant's targets from that read model. */
  load: (tenant: string) => Promise<Target[]>;
  /** How long an answer waits for the read model to reach the event before the batch is retried. */
  timeoutMs: number;
}

const MAX_TENANTS = 10_000;

/**
 * A consumer group's targets (a tenant's webhook subscriptions, its log streams) for an event, from
 * a per-instance cache of their read model: most events go to no target, and finding that costs no
 * statement. The answer waits until the read model has passed the event, and the projection drops
 * the tenant's entry (in every instance) before such waits are released, so every target created
 * before the event is in it, whichever instance created it.
 */
export function tenantTargetsAt<Target>(readModels: FollowedReadModels, options: TenantTargetsOptions<Target>): (event: PublicEvent) => Promise<Target[]> {
  const { projection, load, timeoutMs } = options;
  const byTenant = readModelCache<Target[]>(readModels, { maxEntries: MAX_TENANTS, load, stale: { [projection]: (event) => [event.metadata.tenantId] } });
  return async (event) => {
    // Thrown, the bus hands the batch again shortly.
    if (!(await readModels.waitFor(BigInt(event.position), timeoutMs, [projection]))) throw new Error(`the ${projection} read model has not reached event ${event.id} yet`);
    return byTenant.get(event.tenantId);
  };
}
