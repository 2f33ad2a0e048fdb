import type { EventStore } from '../../platform/eventstore/port.ts';
import { readModelCache, type AppliedEventsSource } from '../../platform/projections/read-model-cache.ts';
import { clientIdOf, parseClientId } from './client-ids.ts';
import { applicationByClientId } from './commands.ts';
import type { Application } from './decider.ts';

const MAX_APPLICATIONS = 100_000;

/**
 * Applications by client_id from memory, for every token, authorize, device and logout request. An
 * entry is loaded from the application's stream (the write side) and dropped in every instance
 * when the applications projection applies an event of it; the instance that made the change also
 * drops it as soon as its append succeeded (`forget`), so a rotated secret or a deleted application
 * is refused there at once, and elsewhere within the projection lag. Unknown clients are
 * remembered as null (bounded by the entry limit).
 */
export function cachedApplications(source: AppliedEventsSource, store: EventStore) {
  const byClientId = readModelCache<Application | null>(source, {
    maxEntries: MAX_APPLICATIONS,
    load: (clientId) => applicationByClientId(store, parseClientId(clientId)!.tenant, clientId),
    stale: {
      applications: (event) => {
        const { applicationId } = event.data as { applicationId?: unknown };
        return typeof applicationId === 'string' ? [clientIdOf(event.metadata.tenantId, applicationId)] : 'all';
      },
    },
  });
  return {
    /** The application `clientId` names in `tenant`, or null (also for a client_id naming another tenant). */
    async byClientId(tenant: string, clientId: string): Promise<Application | null> {
      return parseClientId(clientId)?.tenant === tenant ? byClientId.get(clientId) : null;
    },
    forget: (tenant: string, applicationId: string): void => byClientId.invalidate(clientIdOf(tenant, applicationId)),
    /**
     * Whether a client's own token must be refused because its application is gone (deleted, or a
     * client_id of no application of `tenant`); without a promise once loaded. A subject that is
     * no client_id of ours at all is not judged here.
     */
    refused(tenant: string, clientId: string): boolean | Promise<boolean> {
      const parsed = parseClientId(clientId);
      if (!parsed) return false;
      if (parsed.tenant !== tenant) return true;
      const application = byClientId.current(clientId);
      return application instanceof Promise ? application.then((found) => found === null) : application === null;
    },
  };
}

export type CachedApplications = ReturnType<typeof cachedApplications>;
/** Where the OAuth endpoints find clients. */
export type ApplicationDirectory = Pick<CachedApplications, 'byClientId'>;
