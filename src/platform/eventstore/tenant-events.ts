import type { RecordedEvent, TenantEventsQuery } from './port.ts';

/**
 * Whether `event` is one a tenant history read asks for (position aside). Adapters that cannot
 * filter on the server (KurrentDB) filter read pages with it; PostgreSQL states the same in SQL.
 */
export function matchesTenantQuery(event: RecordedEvent, query: TenantEventsQuery): boolean {
  if (event.metadata.tenantId !== query.tenantId) return false;
  if (query.types && !query.types.includes(event.type)) return false;
  if (query.streamPrefix !== undefined && !event.streamId.startsWith(query.streamPrefix)) return false;
  if (!query.from && !query.to) return true;
  const occurredAt = Date.parse(event.metadata.occurredAt);
  return (!query.from || occurredAt >= query.from.getTime()) && (!query.to || occurredAt <= query.to.getTime());
}
