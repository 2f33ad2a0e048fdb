import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { userStreamId } from '../../../src/modules/users/events.ts';
import { newId } from '../../../src/platform/ids.ts';
import { PLATFORM, startTestService, type TestService } from '../../support/service.ts';

describe('user reactions: a deleted role is held by nobody', () => {
  let t: TestService;
  const call = async (method: string, url: string, body?: unknown) =>
    t.request({ method, url, tenant: PLATFORM, body, token: await t.token({ sub: 'admin', tenant: PLATFORM, roles: ['admin'] }) });
  const heldRoles = async (userId: string) => (await call('GET', `/api/users/${userId}/roles`)).body.data.map((r: { name: string }) => r.name).sort();
  const removals = async (userId: string) =>
    (await t.store.readStream(userStreamId(PLATFORM, userId))).filter((e) => e.type === 'UserRoleRemoved').map((e) => ({ data: e.data, metadata: e.metadata }));

  beforeAll(async () => {
    t = await startTestService();
  });
  afterAll(() => t.close());

  it('DELETE /api/roles/{id} answers once every holder has lost the role, by events of their own', async () => {
    const role = (await call('POST', '/api/roles', { name: 'editor', description: 'Edits', permissions: ['manage:users'] })).body.data;
    const holders = [];
    for (const email of ['a@p.test', 'b@p.test']) holders.push((await call('POST', '/api/users', { email, roles: ['user', 'editor'] })).body.data.id);
    const bystander = (await call('POST', '/api/users', { email: 'c@p.test' })).body.data.id;
    expect((await call('DELETE', `/api/roles/${role.id}`)).status).toBe(200);
    const [deleted] = (await t.db.pool.query<{ event_id: string }>("select event_id from events where type = 'RoleDeleted' and data->>'roleId' = $1", [role.id])).rows;
    for (const userId of holders) {
      expect(await heldRoles(userId)).toEqual(['user']);
      expect(await removals(userId)).toEqual([
        { data: { userId, role: { id: role.id, name: 'editor' }, reason: 'role_deleted' }, metadata: expect.objectContaining({ actor: 'system', causationId: deleted!.event_id }) },
      ]);
    }
    expect(await removals(bystander)).toEqual([]);
    expect((await t.db.pool.query('select 1 from user_roles where role_id = $1', [role.id])).rows).toEqual([]);
  });

  it('undoes an assignment of a role that lands after the role was deleted', async () => {
    const role = (await call('POST', '/api/roles', { name: 'gone', description: 'Soon gone', permissions: [] })).body.data;
    const userId = (await call('POST', '/api/users', { email: 'd@p.test' })).body.data.id;
    expect((await call('DELETE', `/api/roles/${role.id}`)).status).toBe(200);
    // An assignment decided on the role read just before its deletion, appended after it.
    const assigned = { id: newId(), type: 'UserRoleAssigned', data: { userId, role: { id: role.id, name: 'gone' } }, metadata: { tenantId: PLATFORM, actor: 'admin', occurredAt: new Date().toISOString() } };
    const { position } = await t.store.append(userStreamId(PLATFORM, userId), [assigned]);
    const caused = await t.service.reactions.waitFor(position, 5000);
    expect(caused).not.toBeNull();
    expect(await t.service.runner.waitFor(caused!, 5000, ['users'])).toBe(true);
    expect(await removals(userId)).toEqual([{ data: { userId, role: { id: role.id, name: 'gone' }, reason: 'role_deleted' }, metadata: expect.objectContaining({ causationId: assigned.id }) }]);
    expect(await heldRoles(userId)).toEqual(['user']);
  });
});
