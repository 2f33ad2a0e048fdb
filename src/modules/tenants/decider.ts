import type { Decider } from '../../platform/commands/decider.ts';
import { notFound, validationError } from '../../platform/errors.ts';
import { tenantError } from './errors.ts';
import type { TenantEvent } from './events.ts';

export type TenantState =
  | { status: 'absent' }
  | { status: 'active'; tenantId: string; name: string; displayName: string }
  | { status: 'deleted'; tenantId: string; name: string };

export type TenantCommand =
  | { type: 'CreateTenant'; tenantId: string; name: string; displayName: string }
  | { type: 'UpdateTenant'; displayName?: string | undefined }
  | { type: 'DeleteTenant'; platformTenant: string };

export const tenantDecider: Decider<TenantState, TenantCommand, TenantEvent> = {
  initialState: () => ({ status: 'absent' }),

  evolve(state, event) {
    switch (event.type) {
      case 'TenantCreated':
        return { status: 'active', ...event.data };
      case 'TenantUpdated':
        return state.status === 'active' ? { ...state, displayName: event.data.displayName } : state;
      case 'TenantDeleted':
        return { status: 'deleted', tenantId: event.data.tenantId, name: event.data.name };
      default: {
        const exhaustive: never = event;
        return exhaustive;
      }
    }
  },

  decide(command, state) {
    switch (command.type) {
      case 'CreateTenant':
        if (state.status !== 'absent') throw tenantError('TENANT_EXISTS', 'Tenant already exists');
        return [{ type: 'TenantCreated', data: { tenantId: command.tenantId, name: command.name, displayName: command.displayName } }];
      case 'UpdateTenant':
        if (state.status !== 'active') throw notFound('Tenant');
        if (command.displayName === undefined || command.displayName === state.displayName) return [];
        return [{ type: 'TenantUpdated', data: { tenantId: state.tenantId, displayName: command.displayName } }];
      case 'DeleteTenant':
        if (state.status !== 'active') throw notFound('Tenant');
        if (state.name === command.platformTenant) {
          throw validationError('The platform tenant cannot be deleted');
        }
        return [{ type: 'TenantDeleted', data: { tenantId: state.tenantId, name: state.name } }];
      default: {
        const exhaustive: never = command;
        return exhaustive;
      }
    }
  },
};
