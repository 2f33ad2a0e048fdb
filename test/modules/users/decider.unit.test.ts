import { describe, expect, it } from 'vitest';
import { fold } from '../../../src/platform/commands/decider.ts';
import { MAX_PASSWORD_HISTORY, userDecider } from '../../../src/modules/users/decider.ts';
import type { UserEvent, UserProfile } from '../../../src/modules/users/events.ts';
import { deciderSpec } from '../../support/decider-spec.ts';

const spec = deciderSpec(userDecider);
const profile = { email: 'a@x.test', username: 'a', firstName: 'A', lastName: null };
const role = { id: 'r1', name: 'user' };
const created: UserEvent = {
  type: 'UserCreated',
  data: { userId: 'u1', ...profile, enabled: true, emailVerified: false, passwordHash: null, roles: [role], origin: 'admin' },
};

describe('user decider', () => {
  it('creates a user once', () => {
    spec.given([]).when({ type: 'CreateUser', userId: 'u1', profile, passwordHash: null, roles: [role], enabled: true, emailVerified: false, origin: 'admin' }).then([created]);
    spec.given([created]).when({ type: 'CreateUser', userId: 'u1', profile, passwordHash: null, roles: [], enabled: true, emailVerified: false, origin: 'admin' }).thenThrows('USER_EXISTS');
  });

  it('records only changed profile fields, and disabling as its own event', () => {
    spec.given([created]).when({ type: 'UpdateUser', profile: { firstName: 'A', lastName: 'B' }, enabled: false }).then([
      { type: 'UserProfileUpdated', data: { userId: 'u1', lastName: 'B' } },
      { type: 'UserDisabled', data: { userId: 'u1' } },
    ]);
    spec.given([created]).when({ type: 'UpdateUser', profile: {}, enabled: true }).then([]);
    spec.given([created, { type: 'UserDisabled', data: { userId: 'u1' } }]).when({ type: 'UpdateUser', profile: {}, enabled: true }).then([
      { type: 'UserEnabled', data: { userId: 'u1' } },
    ]);
  });

  it('counts e-mail changes (e-mailed links name the count they were mailed at), and nothing else', () => {
    const update = (data: Partial<UserProfile>): UserEvent => ({ type: 'UserProfileUpdated', data: { userId: 'u1', ...data } });
    const versionAfter = (events: UserEvent[]) => {
      const state = fold(userDecider, [created, ...events]);
      return state.status === 'active' ? state.emailVersion : null;
    };
    expect(versionAfter([])).toBe(0);
    expect(versionAfter([update({ firstName: 'B', username: 'b' }), { type: 'UserDisabled', data: { userId: 'u1' } }])).toBe(0);
    expect(versionAfter([{ type: 'UserPasswordChanged', data: { userId: 'u1', passwordHash: 'h1', reason: 'change' } }])).toBe(0);
    expect(versionAfter([update({ email: 'a@x.test' })])).toBe(0);
    expect(versionAfter([update({ email: 'b@x.test', lastName: 'B' })])).toBe(1);
    // Back to the first address: a link mailed before the first change stays void.
    expect(versionAfter([update({ email: 'b@x.test' }), update({ email: 'a@x.test' })])).toBe(2);
    spec.given([created]).when({ type: 'UpdateUser', profile: { email: 'b@x.test' } }).then([update({ email: 'b@x.test' })]);
  });

  it('assigns a role once and removes only a held role', () => {
    const admin = { id: 'r2', name: 'admin' };
    spec.given([created]).when({ type: 'AssignRole', role: admin }).then([{ type: 'UserRoleAssigned', data: { userId: 'u1', role: admin } }]);
    spec.given([created]).when({ type: 'AssignRole', role }).then([]);
    spec.given([created]).when({ type: 'RemoveRole', roleId: 'r1' }).then([{ type: 'UserRoleRemoved', data: { userId: 'u1', role } }]);
    spec.given([created]).when({ type: 'RemoveRole', roleId: 'r9' }).then([]);
  });

  it('removes a deleted role from its holder once, saying why (redelivery of the reaction appends nothing)', () => {
    const removed: UserEvent = { type: 'UserRoleRemoved', data: { userId: 'u1', role, reason: 'role_deleted' } };
    spec.given([created]).when({ type: 'RemoveRole', roleId: 'r1', reason: 'role_deleted' }).then([removed]);
    spec.given([created, removed]).when({ type: 'RemoveRole', roleId: 'r1', reason: 'role_deleted' }).then([]);
  });

  it('deletes softly: a deleted user accepts no command', () => {
    const deleted: UserEvent = { type: 'UserDeleted', data: { userId: 'u1', email: 'a@x.test', username: 'a' } };
    spec.given([created]).when({ type: 'DeleteUser' }).then([deleted]);
    for (const command of [{ type: 'DeleteUser' as const }, { type: 'AssignRole' as const, role }, { type: 'ChangePassword' as const, passwordHash: 'h', reason: 'change' as const, expectedCurrentHash: null }]) {
      spec.given([created, deleted]).when(command).thenThrows('NOT_FOUND');
    }
    spec.given([]).when({ type: 'UpdateUser', profile: { firstName: 'x' } }).thenThrows('NOT_FOUND');
  });

  it('erases an active user by deleting it first, a deleted one once, and nobody unknown', () => {
    const deleted: UserEvent = { type: 'UserDeleted', data: { userId: 'u1', email: 'a@x.test', username: 'a' } };
    const erased: UserEvent = { type: 'UserErased', data: { userId: 'u1' } };
    spec.given([created]).when({ type: 'EraseUser' }).then([deleted, erased]);
    spec.given([created, deleted]).when({ type: 'EraseUser' }).then([erased]);
    spec.given([created, deleted, erased]).when({ type: 'EraseUser' }).then([]);
    spec.given([]).when({ type: 'EraseUser' }).thenThrows('NOT_FOUND');
    spec.given([created, deleted, erased]).when({ type: 'UpdateUser', profile: { firstName: 'x' } }).thenThrows('NOT_FOUND');
  });

  it('changes the password only against the hash it was checked with, keeping a bounded history', () => {
    const withHash: UserEvent = { ...created, data: { ...created.data, passwordHash: 'h0' } } as UserEvent;
    spec
      .given([withHash])
      .when({ type: 'ChangePassword', passwordHash: 'h1', reason: 'change', expectedCurrentHash: 'h0' })
      .then([{ type: 'UserPasswordChanged', data: { userId: 'u1', passwordHash: 'h1', reason: 'change' } }]);
    spec.given([withHash]).when({ type: 'ChangePassword', passwordHash: 'h1', reason: 'reset', expectedCurrentHash: 'stale' }).thenThrows('CONFLICT');
    const changes: UserEvent[] = Array.from({ length: 30 }, (_, i) => ({
      type: 'UserPasswordChanged',
      data: { userId: 'u1', passwordHash: `h${i + 1}`, reason: 'change' },
    }));
    const state = fold(userDecider, [withHash, ...changes]);
    expect(state).toMatchObject({ passwordHash: 'h30', passwordVersion: 30 });
    const history = state.status === 'active' ? state.passwordHistory : [];
    expect(history).toHaveLength(MAX_PASSWORD_HISTORY);
    expect(history.slice(0, 2)).toEqual(['h29', 'h28']);
  });
});
