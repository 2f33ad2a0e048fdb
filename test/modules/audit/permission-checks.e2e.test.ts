import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFgaService, type FgaTestService } from '../fga/support/fga-service.ts';

const DSL = `model
  schema 1.1
type user
type document
  relations
    define viewer: [user]`;

describe('PERMISSION_CHECK entries: every FGA check and every denied permission', () => {
  let t: FgaTestService;
  const checks = async (tenant = 'acme') => {
    await t.service.permissionChecks.drain();
    const response = await t.call('GET', '/api/logs/audit?action=PERMISSION_CHECK&limit=500', undefined, { tenant });
    expect(response.status).toBe(200);
    return (response.body.data as Record<string, any>[]).reverse();
  };

  beforeAll(async () => {
    t = await startFgaService({ env: { AUDIT_FLUSH_INTERVAL_MS: '60000' } });
    await t.activeModel(DSL);
    const written = await t.call('POST', '/api/fga/tuples', { objectType: 'document', objectId: 'd1', relation: 'viewer', subjectType: 'user', subjectId: 'anne' });
    expect(written.status).toBe(201);
  });
  afterAll(() => t.close());

  it('records each check with its question and answer, failures with their code, and nothing for the other FGA queries', async () => {
    const check = (subjectId: string, relation = 'viewer') =>
      t.call('POST', '/api/fga/check', { objectType: 'document', objectId: 'd1', relation, subjectType: 'user', subjectId });
    expect((await check('anne')).body.data.allowed).toBe(true);
    expect((await check('bob')).body.data.allowed).toBe(false);
    expect((await check('anne', 'nope')).status).toBe(400);
    await t.call('POST', '/api/fga/list-objects', { objectType: 'document', relation: 'viewer', subjectType: 'user', subjectId: 'anne' });

    const entries = await checks();
    expect(entries.map((e) => [e.status, e.errorCode, e.metadata])).toEqual([
      ['success', null, { object: 'document:d1', relation: 'viewer', subject: 'user:anne', allowed: true }],
      ['success', null, { object: 'document:d1', relation: 'viewer', subject: 'user:bob', allowed: false }],
      ['failure', 'INVALID_RELATION', { object: 'document:d1', relation: 'nope', subject: 'user:anne' }],
    ]);
    expect(entries[0]).toMatchObject({ action: 'PERMISSION_CHECK', userId: 'acme-caller', resource: null, clientIp: '127.0.0.1', errorMessage: null });
    expect(new Date(entries[0]!.createdAt).getTime()).toBeGreaterThan(Date.now() - 60_000);
  });

  it('records a 403 PERMISSION_DENIED from any route, in the tenant of the request; allowed requests leave no entry', async () => {
    const before = (await checks('beta')).length;
    const denied = await t.call('GET', '/api/users', undefined, { tenant: 'beta', roles: ['user'] });
    expect(denied.status).toBe(403);
    const deniedCheck = await t.call('POST', '/api/fga/check', { objectType: 'document', objectId: 'd1', relation: 'viewer', subjectType: 'user', subjectId: 'x' }, { tenant: 'beta', roles: ['user'] });
    expect(deniedCheck.status).toBe(403);
    await t.call('GET', '/api/users', undefined, { tenant: 'beta' });

    const entries = (await checks('beta')).slice(before);
    expect(entries.map((e) => [e.status, e.errorCode, e.userId, e.metadata])).toEqual([
      ['failure', 'PERMISSION_DENIED', 'beta-caller', { method: 'GET', route: '/api/users' }],
      ['failure', 'PERMISSION_DENIED', 'beta-caller', { method: 'POST', route: '/api/fga/check' }],
    ]);
    expect(entries[0]!.errorMessage).toContain('manage:users');
    expect((await checks('acme')).some((e) => e.userId === 'beta-caller')).toBe(false);
  });

  it('are left out of the default listing', async () => {
    const listed = await t.call('GET', '/api/logs/audit?limit=500');
    expect(listed.body.data.length).toBeGreaterThan(0);
    expect(listed.body.data.some((e: { action: string }) => e.action === 'PERMISSION_CHECK')).toBe(false);
  });
});
