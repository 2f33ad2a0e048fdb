import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFgaService, type FgaTestService } from '../fga/support/fga-service.ts';

describe('compliance history: GET /api/users/{id}/history and GET /api/users/{id}?asOf=', () => {
  let t: FgaTestService;
  let userId: string;
  let createdAt: string;
  let betweenWrites: string;

  beforeAll(async () => {
    t = await startFgaService();
    const created = await t.call('POST', '/api/users', { email: 'jane@acme.test', firstName: 'Jane', password: 'Str0ngPass!' });
    expect(created.status).toBe(201);
    ({ id: userId, createdAt } = created.body.data);
    await sleep(5);
    betweenWrites = new Date().toISOString();
    await sleep(5);
    expect((await t.call('PUT', `/api/users/${userId}`, { lastName: 'Doe', enabled: false })).status).toBe(200);
    const created2 = await t.call('POST', '/api/roles', { name: 'user-admin', permissions: ['manage:users'] });
    expect(created2.status).toBe(201);
  });
  afterAll(() => t.close());

  it("lists the user's events oldest first with position, type, time, actor and masked data", async () => {
    const response = await t.call('GET', `/api/users/${userId}/history`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      ok: true,
      data: [
        {
          position: expect.stringMatching(/^\d+$/),
          type: 'UserCreated',
          occurredAt: createdAt,
          actor: 'acme-caller',
          data: expect.objectContaining({ userId, email: 'jane@acme.test', passwordHash: '[REDACTED]' }),
        },
        { position: expect.any(String), type: 'UserProfileUpdated', occurredAt: expect.any(String), actor: 'acme-caller', data: { userId, lastName: 'Doe' } },
        { position: expect.any(String), type: 'UserDisabled', occurredAt: expect.any(String), actor: 'acme-caller', data: { userId } },
      ],
    });
    const positions = response.body.data.map((e: { position: string }) => BigInt(e.position));
    expect(positions).toEqual([...positions].sort((a, b) => (a < b ? -1 : 1)));
  });

  it('answers the user as it was at asOf in the GET shape, 404 before it existed, 400 for a malformed or future instant', async () => {
    const now = (await t.call('GET', `/api/users/${userId}`)).body.data;
    const then = await t.call('GET', `/api/users/${userId}?asOf=${betweenWrites}`);
    expect(then.status).toBe(200);
    expect(then.body.data).toEqual({ ...now, lastName: null, enabled: true });
    expect((await t.call('GET', `/api/users/${userId}?asOf=${encodeURIComponent(new Date().toISOString())}`)).body.data).toEqual(now);

    const before = await t.call('GET', `/api/users/${userId}?asOf=2020-01-01T00:00:00Z`);
    expect(before.status).toBe(404);
    expect(before.body.error.code).toBe('NOT_FOUND');
    for (const bad of ['yesterday', '2026-01-01', encodeURIComponent(new Date(Date.now() + 3_600_000).toISOString())]) {
      const response = await t.call('GET', `/api/users/${userId}?asOf=${bad}`);
      expect(response.status, bad).toBe(400);
      expect(response.body.error.code).toBe('VALIDATION_ERROR');
    }
  });

  it("answers 404 for another tenant's user and an unknown id, on both routes", async () => {
    const asOf = encodeURIComponent(new Date().toISOString());
    for (const url of [`/api/users/${userId}/history`, `/api/users/${userId}?asOf=${asOf}`]) {
      expect((await t.call('GET', url, undefined, { tenant: 'beta' })).status, url).toBe(404);
    }
    expect((await t.call('GET', '/api/users/00000000-0000-7000-8000-000000000000/history')).status).toBe(404);
    expect((await t.call('GET', '/api/users/not-a-uuid/history')).status).toBe(404);
  });

  it('needs view:audit as well as manage:users', async () => {
    const asOf = encodeURIComponent(new Date().toISOString());
    const usersOnly = { roles: ['user-admin'] };
    expect((await t.call('GET', `/api/users/${userId}`, undefined, usersOnly)).status).toBe(200);
    for (const url of [`/api/users/${userId}/history`, `/api/users/${userId}?asOf=${asOf}`]) {
      const denied = await t.call('GET', url, undefined, usersOnly);
      expect(denied.status, url).toBe(403);
      expect(denied.body.error.code).toBe('PERMISSION_DENIED');
    }
  });
});
