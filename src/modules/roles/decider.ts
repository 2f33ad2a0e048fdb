import type { Decider } from '../../platform/commands/decider.ts';
import { notFound } from '../../platform/errors.ts';
import { roleError } from './errors.ts';
import type { RoleEvent, RoleFields } from './events.ts';

export type RoleState =
  | { status: 'absent' }
  | ({ status: 'active'; roleId: string } & RoleFields)
  | { status: 'deleted'; roleId: string };

export type RoleCommand =
  | { type: 'CreateRole'; roleId: string; fields: RoleFields }
  | { type: 'UpdateRole'; changes: Partial<RoleFields> }
  | { type: 'DeleteRole' };

export const roleDecider: Decider<RoleState, RoleCommand, RoleEvent> = {
  initialState: () => ({ status: 'absent' }),

  evolve(state, event) {
    switch (event.type) {
      case 'RoleCreated': {
        const { roleId, ...fields } = event.data;
        return { status: 'active', roleId, ...fields };
      }
      case 'RoleUpdated': {
        if (state.status !== 'active') return state;
        const { roleId: _roleId, ...changes } = event.data;
        return { ...state, ...changes };
      }
      case 'RoleDeleted':
        return { status: 'deleted', roleId: event.data.roleId };
      default: {
        const exhaustive: never = event;
        return exhaustive;
      }
    }
  },

  decide(command, state) {
    switch (command.type) {
      case 'CreateRole':
        if (state.status !== 'absent') throw roleError('ROLE_EXISTS', 'Role already exists');
        return [{ type: 'RoleCreated', data: { roleId: command.roleId, ...command.fields } }];
      case 'UpdateRole': {
        if (state.status !== 'active') throw notFound('Role');
        const changed = Object.fromEntries(
          Object.entries(command.changes).filter(
            ([key, value]) => value !== undefined && JSON.stringify(value) !== JSON.stringify(state[key as keyof RoleFields]),
          ),
        ) as Partial<RoleFields>;
        if (Object.keys(changed).length === 0) return [];
        return [{ type: 'RoleUpdated', data: { roleId: state.roleId, ...changed } }];
      }
      case 'DeleteRole':
        if (state.status !== 'active') throw notFound('Role');
        return [{ type: 'RoleDeleted', data: { roleId: state.roleId, name: state.name } }];
      default: {
        const exhaustive: never = command;
        return exhaustive;
      }
    }
  },
};
