import { z } from 'zod';
import { defineEvent, type EventOf } from '../../platform/events/define-event.ts';

const roleFields = z.strictObject({ name: z.string(), description: z.string(), color: z.string(), permissions: z.array(z.string()) });
export type RoleFields = z.infer<typeof roleFields>;

export const roleCreated = defineEvent({ type: 'RoleCreated', data: roleFields.extend({ roleId: z.string() }) });
export const roleUpdated = defineEvent({ type: 'RoleUpdated', data: roleFields.partial().extend({ roleId: z.string() }) });
export const roleDeleted = defineEvent({ type: 'RoleDeleted', data: z.strictObject({ roleId: z.string(), name: z.string() }) });

export const roleEvents = [roleCreated, roleUpdated, roleDeleted];

export type RoleCreated = EventOf<typeof roleCreated>;
export type RoleUpdated = EventOf<typeof roleUpdated>;
export type RoleDeleted = EventOf<typeof roleDeleted>;
export type RoleEvent = EventOf<(typeof roleEvents)[number]>;

export const roleStreamId = (tenant: string, roleId: string): string => `role-${tenant}.${roleId}`;

/** Role names are unique per tenant, case-insensitively. */
export const roleNameReservation = (tenant: string, name: string, roleId: string) => ({
  scope: tenant,
  kind: 'role-name',
  value: name,
  owner: roleStreamId(tenant, roleId),
});
