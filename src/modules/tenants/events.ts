import { z } from 'zod';
import { defineEvent, type EventOf } from '../../platform/events/define-event.ts';

export const tenantCreated = defineEvent({
  type: 'TenantCreated',
  data: z.strictObject({ tenantId: z.string(), name: z.string(), displayName: z.string() }),
});
export const tenantUpdated = defineEvent({ type: 'TenantUpdated', data: z.strictObject({ tenantId: z.string(), displayName: z.string() }) });
export const tenantDeleted = defineEvent({ type: 'TenantDeleted', data: z.strictObject({ tenantId: z.string(), name: z.string() }) });

export const tenantEvents = [tenantCreated, tenantUpdated, tenantDeleted];

export type TenantCreated = EventOf<typeof tenantCreated>;
export type TenantUpdated = EventOf<typeof tenantUpdated>;
export type TenantDeleted = EventOf<typeof tenantDeleted>;
export type TenantEvent = EventOf<(typeof tenantEvents)[number]>;

export const tenantStreamId = (name: string, tenantId: string): string => `tenant-${name}.${tenantId}`;

/** The platform-wide scope of tenant-name reservations. Names are never released (see docs). */
export const tenantNameReservation = (name: string, tenantId: string) => ({
  scope: 'platform',
  kind: 'tenant-name',
  value: name,
  owner: tenantStreamId(name, tenantId),
});
