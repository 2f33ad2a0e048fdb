import type { DomainEvent } from '../../platform/commands/decider.ts';

export interface RoleFields {
  name: string;
  description: string;
  color: string;
  permissions: string[];
}

export type RoleCreated = DomainEvent<'RoleCreated', RoleFields & { roleId: string }>;
export type RoleUpdated = DomainEvent<'RoleUpdated', Partial<RoleFields> & { roleId: string }>;
export type RoleDeleted = DomainEvent<'RoleDeleted', { roleId: string; name: string }>;

export type RoleEvent = RoleCreated | RoleUpdated | RoleDeleted;

export const roleStreamId = (tenant: string, roleId: string): string => `role-${tenant}.${roleId}`;

/** Role names are unique per tenant, case-insensitively. */
export const roleNameReservation = (tenant: string, name: string, roleId: string) => ({
  scope: tenant,
  kind: 'role-name',
  value: name,
  owner: roleStreamId(tenant, roleId),
});
