import { describe, expect, it } from 'vitest';
import { permissionsWithinScope } from '../../../src/modules/roles/permissions.ts';

describe('permissionsWithinScope', () => {
  it("keeps the scope's permission names the holder has", () => {
    expect(permissionsWithinScope(new Set(['manage:users', 'view:audit']), ['manage:users', 'manage:sessions', 'openid'])).toEqual(new Set(['manage:users']));
  });

  it('admin:all held grants each permission name in the scope, and only those', () => {
    expect(permissionsWithinScope(new Set(['admin:all']), ['manage:groups', 'profile'])).toEqual(new Set(['manage:groups']));
  });

  it("a client (no roles) gets every permission name of its scope, nothing else", () => {
    expect(permissionsWithinScope(null, ['manage:webhooks', 'scim', 'admin:all'])).toEqual(new Set(['manage:webhooks', 'admin:all']));
  });
});
