import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PERMISSIONS } from '../../../src/modules/roles/permissions.ts';
import { PLATFORM, startTestService, type TestService } from '../../support/service.ts';

describe('permissions of the next capabilities', () => {
  let t: TestService;
  const NEW = ['manage:organizations', 'manage:groups', 'manage:applications', 'manage:webhooks', 'manage:actions'];

  beforeAll(async () => {
    t = await startTestService();
  });
  afterAll(() => t.close());

  it('a role can be created with them, and the admin role of a new tenant holds them all', async () => {
    const root = await t.token({ sub: 'root', tenant: PLATFORM, roles: ['admin'] });
    const created = await t.request({ method: 'POST', url: '/api/roles', tenant: PLATFORM, token: root, body: { name: 'integrator', permissions: NEW } });
    expect(created.status).toBe(201);
    expect(created.body.data.permissions).toEqual(NEW);
    expect((await t.request({ method: 'POST', url: '/api/tenants', tenant: PLATFORM, token: root, body: { name: 'fresh' } })).status).toBe(201);
    const fresh = await t.token({ sub: 'a', tenant: 'fresh', roles: ['admin'] });
    const roles = (await t.request({ method: 'GET', url: '/api/roles', tenant: 'fresh', token: fresh })).body.data;
    const admin = roles.find((role: { name: string }) => role.name === 'admin');
    expect(admin.permissions).toEqual(expect.arrayContaining(NEW));
    expect(new Set(admin.permissions)).toEqual(new Set(PERMISSIONS));
  });
});
