import { defaultRoleAppends } from '../roles/index.ts';
import type { CommandContext } from '../../platform/commands/context.ts';
import { handleCommand } from '../../platform/commands/handle-command.ts';
import { claimReservation, isReservationConflict, type ReservationDeps } from '../../platform/commands/reservations.ts';
import { tenantError } from './errors.ts';
import { newId } from '../../platform/ids.ts';
import { tenantDecider } from './decider.ts';
import { tenantNameReservation, tenantStreamId } from './events.ts';

const tenantExists = () => tenantError('TENANT_EXISTS', 'A tenant with this name already exists');

export function tenantCommands(deps: ReservationDeps & { platformTenant: string | undefined }) {
  return {
    /** Creates the tenant, its name reservation and its default roles in one atomic append. */
    async create(input: { name: string; displayName?: string | undefined }, context: CommandContext) {
      const tenantId = newId();
      const name = input.name.toLowerCase();
      const tenantContext = { ...context, tenantId: name };
      try {
        const result = await handleCommand(
          deps,
          tenantDecider,
          tenantStreamId(name, tenantId),
          { type: 'CreateTenant', tenantId, name, displayName: input.displayName ?? name },
          tenantContext,
          async () => [
            ...(await claimReservation(deps, tenantNameReservation(name, tenantId), tenantContext)),
            ...(await defaultRoleAppends(deps, name, tenantContext)),
          ],
        );
        return { tenantId, position: result.position, tenant: result.state, createdAt: result.occurredAt! };
      } catch (error) {
        // The tenant is new: a taken role name in it can only mean a concurrent creation won.
        if (isReservationConflict(error, 'tenant-name') || isReservationConflict(error, 'role-name')) throw tenantExists();
        throw error;
      }
    },

    async update(tenant: { id: string; name: string }, input: { displayName?: string | undefined }, context: CommandContext) {
      return handleCommand(deps, tenantDecider, tenantStreamId(tenant.name, tenant.id), { type: 'UpdateTenant', ...input }, {
        ...context,
        tenantId: tenant.name,
      });
    },

    /** Soft delete. The name stays reserved, so no later tenant can inherit the old one's data. */
    async delete(tenant: { id: string; name: string }, context: CommandContext) {
      return handleCommand(
        deps,
        tenantDecider,
        tenantStreamId(tenant.name, tenant.id),
        { type: 'DeleteTenant', platformTenant: deps.platformTenant ?? '' },
        { ...context, tenantId: tenant.name },
      );
    },
  };
}

export type TenantCommands = ReturnType<typeof tenantCommands>;
