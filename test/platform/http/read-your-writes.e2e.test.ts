import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { PLATFORM, startTestService, type TestService } from '../../support/service.ts';

/** Writes answer from what they did, and wait for exactly the read models their events feed. */
describe('read-your-writes over HTTP', () => {
  let t: TestService;
  let admin: string;
  const worker = (name: string) => t.service.runner.workers.find((candidate) => candidate.projection.name === name)!;
  const usersWorker = () => worker('users');
  const call = (method: string, url: string, body?: unknown) => t.request({ method, url, body, token: admin, tenant: PLATFORM });

  beforeAll(async () => {
    t = await startTestService({ env: { READ_YOUR_WRITES_TIMEOUT_MS: '400' } });
    admin = await t.token({ sub: 'admin', tenant: PLATFORM, roles: ['admin'] });
  });
  afterAll(() => t.close());

  it('answers a create with the created user while the users projection lags past the bound', async () => {
    await usersWorker().stop();
    try {
      const created = await call('POST', '/api/users', { email: 'lag@p.test', firstName: 'Lag', roles: ['user'] });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({
        ok: true,
        data: {
          id: expect.any(String), email: 'lag@p.test', username: null, firstName: 'Lag', lastName: null, enabled: true, emailVerified: false,
          createdAt: expect.any(String), roles: ['user'], phoneNumber: null, phoneNumberVerified: false, lastLoginAt: null, lockedUntil: null,
          twoFactor: { totpEnabled: false, smsEnabled: false, webauthnEnabled: false },
        },
      });
      // The projection has not run: the read model does not know the user yet.
      expect((await call('GET', `/api/users/${created.body.data.id}`)).status).toBe(404);
      await usersWorker().start();
      // Once it catches up, the read model gives the same view the create answered.
      await expect.poll(async () => (await call('GET', `/api/users/${created.body.data.id}`)).body.data, { timeout: 10_000 }).toEqual(created.body.data);
    } finally {
      if (!usersWorker().running) await usersWorker().start();
    }
  });

  it('answers role, tenant and model creates from what they appended while their projections lag', async () => {
    const lagging = ['roles', 'tenants', 'fga'].map(worker);
    await Promise.all(lagging.map((w) => w.stop()));
    try {
      const role = await call('POST', '/api/roles', { name: 'auditor', permissions: ['view:audit'] });
      expect([role.status, role.body.data]).toEqual([201, { id: expect.any(String), name: 'auditor', description: '', color: '#9e9e9e', permissions: ['view:audit'], createdAt: expect.any(String) }]);
      const tenant = await call('POST', '/api/tenants', { name: 'lagging', displayName: 'Lagging' });
      expect([tenant.status, tenant.body.data]).toEqual([201, { id: expect.any(String), name: 'lagging', displayName: 'Lagging', createdAt: expect.any(String), updatedAt: tenant.body.data.createdAt }]);
      const model = await call('POST', '/api/fga/models', { name: 'm', dsl: 'model\n  schema 1.1\ntype user\ntype doc\n  relations\n    define viewer: [user]' });
      expect([model.status, model.body.data.version, model.body.data.isActive]).toEqual([201, 1, false]);
      await Promise.all(lagging.map((w) => w.start()));
      await expect.poll(async () => (await call('GET', `/api/roles/${role.body.data.id}`)).body.data, { timeout: 10_000 }).toEqual(role.body.data);
      await expect.poll(async () => (await call('GET', '/api/tenants/lagging')).body.data, { timeout: 10_000 }).toEqual(tenant.body.data);
      await expect.poll(async () => (await call('GET', `/api/fga/models/${model.body.data.id}`)).body.data, { timeout: 10_000 }).toEqual(model.body.data);
    } finally {
      await Promise.all(lagging.filter((w) => !w.running).map((w) => w.start()));
    }
  });

  it('answers updates from the command state while the read models lag past the bound', async () => {
    const role = (await call('POST', '/api/roles', { name: 'editor' })).body.data;
    const model = (await call('POST', '/api/fga/models', { name: 'before', dsl: 'model\n  schema 1.1\ntype user\ntype doc\n  relations\n    define viewer: [user]' })).body.data;
    const lagging = ['roles', 'tenants', 'fga', 'settings'].map(worker);
    await Promise.all(lagging.map((w) => w.stop()));
    try {
      const updatedRole = await call('PUT', `/api/roles/${role.id}`, { description: 'Edits', permissions: ['manage:users'] });
      expect(updatedRole.body.data).toEqual({ ...role, description: 'Edits', permissions: ['manage:users'] });
      const updatedTenant = await call('PUT', `/api/tenants/${PLATFORM}`, { displayName: 'The Platform' });
      expect(updatedTenant.body.data).toMatchObject({ name: PLATFORM, displayName: 'The Platform' });
      const updatedModel = await call('PUT', `/api/fga/models/${model.id}`, { name: 'after' });
      expect(updatedModel.body.data).toEqual({ ...model, name: 'after', updatedAt: expect.any(String) });
      const settings = await call('PUT', '/api/realm-settings', { section: 'login', data: { maxConcurrentSessions: 9 } });
      expect(settings.body.data.login.maxConcurrentSessions).toBe(9);
      await Promise.all(lagging.map((w) => w.start()));
      // The read models, once caught up, show what the updates answered.
      await expect.poll(async () => (await call('GET', `/api/roles/${role.id}`)).body.data, { timeout: 10_000 }).toEqual(updatedRole.body.data);
      await expect.poll(async () => (await call('GET', `/api/tenants/${PLATFORM}`)).body.data, { timeout: 10_000 }).toEqual(updatedTenant.body.data);
      await expect.poll(async () => (await call('GET', `/api/fga/models/${model.id}`)).body.data, { timeout: 10_000 }).toEqual(updatedModel.body.data);
    } finally {
      await Promise.all(lagging.filter((w) => !w.running).map((w) => w.start()));
    }
  });

  it('waits, before answering a write, for the projections that handle what it appended', async () => {
    const created = await call('POST', '/api/users', { email: 'wait@p.test' });
    await usersWorker().stop();
    // The projection comes back within the bound: the update answers only once it has applied the change.
    setTimeout(() => void usersWorker().start(), 150);
    const updated = await call('PUT', `/api/users/${created.body.data.id}`, { firstName: 'Waited' });
    expect(updated.body.data).toEqual({ id: created.body.data.id, email: 'wait@p.test', firstName: 'Waited', enabled: true });
    expect((await call('GET', `/api/users/${created.body.data.id}`)).body.data.firstName).toBe('Waited');
  });

  it('does not wait for projections that handle none of the appended events', async () => {
    await usersWorker().stop();
    const usersWaits = vi.spyOn(usersWorker().waiters, 'wait');
    const settingsWaits = vi.spyOn(worker('settings').waiters, 'wait');
    try {
      // A realm-settings change feeds the settings read model only.
      const response = await call('PUT', '/api/realm-settings', { section: 'bruteForce', data: { lockoutThreshold: 7 } });
      expect(response.status).toBe(200);
      expect(response.body.data.bruteForce.lockoutThreshold).toBe(7);
      expect(settingsWaits).toHaveBeenCalled();
      expect(usersWaits).not.toHaveBeenCalled();
    } finally {
      usersWaits.mockRestore();
      settingsWaits.mockRestore();
      await usersWorker().start();
    }
  });
});
