import type { CommandContext } from '../../platform/commands/context.ts';
import { handleCommand, lastPosition, toNewEvents } from '../../platform/commands/handle-command.ts';
import {
  claimReservation,
  isReservationConflict,
  releaseReservation,
  type ReservationDeps,
} from '../../platform/commands/reservations.ts';
import { roleError } from './errors.ts';
import type { StreamAppend } from '../../platform/eventstore/port.ts';
import { newId } from '../../platform/ids.ts';
import { roleDecider } from './decider.ts';
import { roleNameReservation, roleStreamId, type RoleFields } from './events.ts';
import { DEFAULT_ROLES } from './permissions.ts';

const nameTaken = () => roleError('ROLE_NAME_TAKEN', 'A role with this name already exists');

/** The appends that create a role with its name reservation (also used inside tenant creation). */
export async function roleCreationAppends(
  deps: ReservationDeps,
  tenant: string,
  roleId: string,
  fields: RoleFields,
  context: CommandContext,
): Promise<StreamAppend[]> {
  const events = roleDecider.decide({ type: 'CreateRole', roleId, fields }, roleDecider.initialState());
  return [
    { streamId: roleStreamId(tenant, roleId), expectedRevision: 'no_stream', events: toNewEvents(events, context, deps.clock) },
    ...(await claimReservation(deps, roleNameReservation(tenant, fields.name, roleId), context)),
  ];
}

export async function defaultRoleAppends(deps: ReservationDeps, tenant: string, context: CommandContext): Promise<StreamAppend[]> {
  const appends = await Promise.all(
    DEFAULT_ROLES.map((role) => roleCreationAppends(deps, tenant, newId(), { ...role, permissions: [...role.permissions] }, context)),
  );
  return appends.flat();
}

export function roleCommands(deps: ReservationDeps) {
  return {
    async create(tenant: string, fields: RoleFields, context: CommandContext) {
      const roleId = newId();
      try {
        const appends = await roleCreationAppends(deps, tenant, roleId, fields, context);
        const position = lastPosition(await deps.store.appendMulti(appends));
        return { roleId, position, role: { id: roleId, ...fields, createdAt: appends[0]!.events[0]!.metadata.occurredAt } };
      } catch (error) {
        if (isReservationConflict(error, 'role-name')) throw nameTaken();
        throw error;
      }
    },

    async update(tenant: string, roleId: string, changes: Partial<RoleFields>, context: CommandContext) {
      const streamId = roleStreamId(tenant, roleId);
      try {
        return await handleCommand(deps, roleDecider, streamId, { type: 'UpdateRole', changes }, context, async (events, before) => {
          const newName = events[0]?.type === 'RoleUpdated' ? events[0].data.name : undefined;
          if (newName === undefined || before.status !== 'active') return [];
          if (newName.toLowerCase() === before.name.toLowerCase()) return []; // same reservation
          return [
            ...(await releaseReservation(deps, roleNameReservation(tenant, before.name, roleId), context)),
            ...(await claimReservation(deps, roleNameReservation(tenant, newName, roleId), context)),
          ];
        });
      } catch (error) {
        if (isReservationConflict(error, 'role-name')) throw nameTaken();
        throw error;
      }
    },

    async delete(tenant: string, roleId: string, context: CommandContext) {
      return handleCommand(deps, roleDecider, roleStreamId(tenant, roleId), { type: 'DeleteRole' }, context, async (events) => {
        const deleted = events.find((e) => e.type === 'RoleDeleted');
        return deleted?.type === 'RoleDeleted'
          ? releaseReservation(deps, roleNameReservation(tenant, deleted.data.name, roleId), context)
          : [];
      });
    },
  };
}
