import type { DomainEvent } from '../../platform/commands/decider.ts';

export type TenantCreated = DomainEvent<'TenantCreated', { tenantId: string; name: string; displayName: string }>;
export type TenantUpdated = DomainEvent<'TenantUpdated', { tenantId: string; displayName: string }>;
export type TenantDeleted = DomainEvent<'TenantDeleted', { tenantId: string; name: string }>;

export type TenantEvent = TenantCreated | TenantUpdated | TenantDeleted;

export const tenantStreamId = (name: string, tenantId: string): string => `tenant-${name}.${tenantId}`;

/** The platform-wide scope of tenant-name reservations. Names are never released (see docs). */
export const tenantNameReservation = (name: string, tenantId: string) => ({
  scope: 'platform',
  kind: 'tenant-name',
  value: name,
  owner: tenantStreamId(name, tenantId),
});
