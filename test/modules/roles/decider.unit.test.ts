import { describe, it } from 'vitest';
import { roleDecider } from '../../../src/modules/roles/decider.ts';
import type { RoleEvent } from '../../../src/modules/roles/events.ts';
import { deciderSpec } from '../../support/decider-spec.ts';

const spec = deciderSpec(roleDecider);
const fields = { name: 'editor', description: 'Edits', color: '#00ff00', permissions: ['manage:users'] };
const created: RoleEvent = { type: 'RoleCreated', data: { roleId: 'r1', ...fields } };

describe('role decider', () => {
  it('creates a role once', () => {
    spec.given([]).when({ type: 'CreateRole', roleId: 'r1', fields }).then([created]);
    spec.given([created]).when({ type: 'CreateRole', roleId: 'r1', fields }).thenThrows('ROLE_EXISTS');
  });

  it('records only the fields that change', () => {
    spec.given([created]).when({ type: 'UpdateRole', changes: { name: 'editor', color: '#ff0000' } }).then([
      { type: 'RoleUpdated', data: { roleId: 'r1', color: '#ff0000' } },
    ]);
    spec.given([created]).when({ type: 'UpdateRole', changes: { permissions: ['manage:users'] } }).then([]);
    spec.given([]).when({ type: 'UpdateRole', changes: { name: 'x' } }).thenThrows('NOT_FOUND');
  });

  it('deletes an existing role and remembers its name for the reservation release', () => {
    spec.given([created]).when({ type: 'DeleteRole' }).then([{ type: 'RoleDeleted', data: { roleId: 'r1', name: 'editor' } }]);
    spec.given([created, { type: 'RoleDeleted', data: { roleId: 'r1', name: 'editor' } }]).when({ type: 'DeleteRole' }).thenThrows('NOT_FOUND');
  });
});
