import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/platform/clock.ts';
import { rebuildProjections } from '../../src/platform/projections/rebuild.ts';
import { allProjections } from '../../src/projections.ts';
import { legacyTupleStreamId } from '../../src/modules/fga/tuples/events.ts';
import { DOCS } from '../modules/fga/support/fga-fixture.ts';
import { diffReadModels, snapshotReadModels } from '../support/read-models.ts';
import { PLATFORM, startTestService, type TestService } from '../support/service.ts';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.ts';

const TENANT = 'acme';
const tuple = (objectId: string, relation: string, subjectId: string) => ({ objectType: 'document', objectId, relation, subjectType: 'user', subjectId });

/**
 * Runs every command of the service over HTTP, snapshots every read model, rebuilds them all from
 * the log with the operator command's code, and expects identical rows: a projection that writes
 * something the log cannot reproduce (a clock, a side effect of another aggregate) fails here.
 */
describe('every read model is rebuilt identically from the log', () => {
  let t: TestService;
  let smtp: TestSmtpServer;
  const clock = new ManualClock(new Date('2030-01-01T00:00:00.000Z'));
  const admin = () => t.token({ sub: 'acme-admin', tenant: TENANT, roles: ['admin'] });
  const call = async (method: string, url: string, body?: unknown, token?: string) => {
    const response = await t.request({ method, url, tenant: TENANT, body, token: token ?? (await admin()) });
    expect(response.status, `${method} ${url}: ${JSON.stringify(response.body)}`).toBeLessThan(300);
    return response.body;
  };
  const anonymous = (url: string, body: unknown) => t.request({ method: 'POST', url, tenant: TENANT, body });
  const login = async (email: string, password: string) => (await anonymous('/api/auth/login', { email, password })).body.data;
  const mailedToken = async (url: string, email: string) => {
    const before = smtp.messages.length;
    await anonymous(url, { email });
    const mail = await smtp.waitForMessage((m) => smtp.messages.indexOf(m) >= before && m.to.includes(email));
    return new URL(/https?:\/\/\S+/.exec(mail.text!)![0]).searchParams.get('token')!;
  };
  const eventCount = async () => Number((await t.db.pool.query<{ n: string }>('select count(*) as n from events')).rows[0]!.n);
  const settle = async () => {
    await t.service.background.drain();
    // The newest committed position, not the newest visible one: an append still committing below it would hide later events.
    const written = await t.store.lastWrittenPosition();
    expect(await t.service.reactions.waitFor(written, 10_000)).not.toBeNull();
    expect(await t.service.runner.waitFor(await t.store.lastWrittenPosition(), 10_000)).toBe(true);
  };

  beforeAll(async () => {
    smtp = await startSmtpServer();
    // Only the test sweeps: a timer's sweep between the snapshot and the rebuild would change the rows compared.
    t = await startTestService({ clock, env: { SMTP_URL: smtp.url, ARGON2_MEMORY_KIB: '1024', ARGON2_ITERATIONS: '1', SESSION_SWEEP_INTERVAL_S: '86400' } });
  });
  afterAll(async () => {
    await t?.close();
    await smtp?.close();
  });

  it('runs every command, rebuilds all projections, and finds the same rows (reactions do not fire again)', async () => {
    // Tenants: create, update, delete.
    const platformAdmin = await t.token({ sub: 'root', tenant: PLATFORM, roles: ['admin'] });
    const tenantCall = (method: string, url: string, body?: unknown) => t.request({ method, url, tenant: PLATFORM, token: platformAdmin, body });
    expect((await tenantCall('POST', '/api/tenants', { name: TENANT })).status).toBe(201);
    expect((await tenantCall('POST', '/api/tenants', { name: 'short-lived' })).status).toBe(201);
    expect((await tenantCall('PUT', '/api/tenants/short-lived', { displayName: 'Short lived' })).status).toBe(200);
    expect((await tenantCall('DELETE', '/api/tenants/short-lived')).status).toBe(200);
    expect((await tenantCall('POST', '/api/admin/signing-keys/rotate')).status).toBe(200);

    // Settings.
    await call('PUT', '/api/realm-settings', { section: 'bruteForce', data: { lockoutThreshold: 2, lockoutDuration: 300 } });
    await call('PUT', '/api/realm-settings', { section: 'general', data: { displayName: 'Acme' } });
    await call('PUT', '/api/realm-settings', { section: 'tokens', data: { sessionIdleTimeout: 3600 } });

    // Roles: create, update, and one deleted while users hold it.
    const auditor = (await call('POST', '/api/roles', { name: 'auditor', description: 'Reads', permissions: ['manage:users'] })).data;
    await call('PUT', `/api/roles/${auditor.id}`, { name: 'reader', color: '#123456' });
    const doomedRole = (await call('POST', '/api/roles', { name: 'doomed', permissions: ['manage:users'] })).data;

    // Users: create, update, disable, enable, roles assigned and removed, one deleted with sessions.
    const ana = (await call('POST', '/api/users', { email: 'ana@acme.test', password: 'Ana-Passw0rd', roles: ['user', 'doomed'] })).data;
    const bob = (await call('POST', '/api/users', { email: 'bob@acme.test', password: 'Bob-Passw0rd', username: 'bob' })).data;
    const cy = (await call('POST', '/api/users', { email: 'cy@acme.test' })).data;
    const dee = (await call('POST', '/api/users', { email: 'dee@acme.test', password: 'Dee-Passw0rd', roles: ['doomed'] })).data;
    await call('PUT', `/api/users/${ana.id}`, { firstName: 'Ana', username: 'ana' });
    await call('PUT', `/api/users/${bob.id}`, { enabled: false });
    await call('PUT', `/api/users/${bob.id}`, { enabled: true, lastName: 'Builder' });
    await call('POST', `/api/users/${ana.id}/roles`, { roleId: auditor.id });
    await call('POST', `/api/users/${bob.id}/roles`, { roleId: auditor.id });
    await call('DELETE', `/api/users/${bob.id}/roles`, { roleId: auditor.id });

    // Sessions: login, refresh, activity, logout, revocations by an admin and by the user.
    const anaSession = await login('ana@acme.test', 'Ana-Passw0rd');
    const refreshed = await t.request({ method: 'POST', url: '/api/auth/token', tenant: TENANT, body: { grant_type: 'refresh_token', refresh_token: anaSession.refreshToken } });
    expect(refreshed.status).toBe(200);
    await call('GET', '/api/user/security/sessions', undefined, anaSession.accessToken);
    const second = await login('ana@acme.test', 'Ana-Passw0rd');
    await call('DELETE', `/api/user/security/sessions/${second.sessionId}`, undefined, anaSession.accessToken);
    const third = await login('ana@acme.test', 'Ana-Passw0rd');
    await call('DELETE', `/api/admin/sessions/${third.sessionId}`);
    const fourth = await login('ana@acme.test', 'Ana-Passw0rd');
    await call('POST', '/api/auth/logout', undefined, fourth.accessToken);
    await call('POST', '/api/auth/change-password', { currentPassword: 'Ana-Passw0rd', newPassword: 'Ana-Passw0rd-2' }, anaSession.accessToken);

    // Failed logins, lockout, unlock; a failure on an unknown account.
    expect((await anonymous('/api/auth/login', { email: 'bob@acme.test', password: 'wrong-Passw0rd' })).status).toBe(401);
    expect((await anonymous('/api/auth/login', { email: 'bob@acme.test', password: 'wrong-Passw0rd' })).status).toBe(423);
    expect((await anonymous('/api/auth/login', { email: 'nobody@acme.test', password: 'wrong-Passw0rd' })).status).toBe(401);
    await call('POST', `/api/users/${bob.id}/unlock`);

    // Forgot and reset password; magic link; signup.
    const resetToken = await mailedToken('/api/auth/forgot-password', 'bob@acme.test');
    expect((await anonymous('/api/auth/reset-password', { token: resetToken, newPassword: 'Bob-Passw0rd-2' })).status).toBe(200);
    const magicToken = await mailedToken('/api/auth/magic-link', 'cy@acme.test');
    expect((await anonymous('/api/auth/magic-link/verify', { token: magicToken })).status).toBe(200);
    expect((await anonymous('/api/auth/signup', { email: 'eve@acme.test', password: 'Eve-Passw0rd' })).status).toBe(201);

    // Deletions whose consequences are reactions: dee's session revoked, the doomed role removed from ana and dee.
    const deeSession = await login('dee@acme.test', 'Dee-Passw0rd');
    await call('DELETE', `/api/roles/${doomedRole.id}`);
    await call('DELETE', `/api/users/${dee.id}`);
    const deeSessions = await call('GET', `/api/admin/sessions?userId=${dee.id}`);
    expect(deeSessions.sessions.map((s: { id: string; status: string }) => [s.id, s.status])).toEqual([[deeSession.sessionId, 'revoked']]);
    expect((await call('GET', `/api/users/${ana.id}/roles`)).data.map((r: { name: string }) => r.name).sort()).toEqual(['reader', 'user']);

    // GDPR erasure: of a user deleted before (dee) and of an active one with a live session (fay).
    await call('POST', `/api/users/${dee.id}/erase`);
    const fay = (await call('POST', '/api/users', { email: 'fay@acme.test', username: 'fay', lastName: 'Erased', password: 'Fay-Passw0rd' })).data;
    await login('fay@acme.test', 'Fay-Passw0rd');
    await call('POST', `/api/users/${fay.id}/erase`);

    // Authorization: models created, updated, activated, deleted; tuples written, deleted, in bulk.
    const model = (await call('POST', '/api/fga/models', { name: 'docs', dsl: DOCS })).data;
    await call('PUT', `/api/fga/models/${model.id}`, { name: 'documents' });
    await call('POST', `/api/fga/models/${model.id}/activate`);
    const draft = (await call('POST', '/api/fga/models', { name: 'draft', dsl: DOCS })).data;
    await call('DELETE', `/api/fga/models/${draft.id}`);
    // Tuples recorded the way the service did before FgaTuplesChanged (one stream and event per tuple) replay as they are.
    const legacy = (type: string, data: object) => ({ id: randomUUID(), type, data, metadata: { tenantId: TENANT, actor: 'acme-admin', occurredAt: clock.now().toISOString() } });
    const oldViewer = tuple('old', 'viewer', bob.id);
    const oldOwner = tuple('old', 'owner', ana.id);
    await t.store.append(legacyTupleStreamId(TENANT, oldViewer), [legacy('FgaTupleWritten', { tuple: oldViewer, modelId: model.id })], 'no_stream');
    await t.store.append(legacyTupleStreamId(TENANT, oldOwner), [legacy('FgaTupleWritten', { tuple: oldOwner, modelId: model.id }), legacy('FgaTupleDeleted', { tuple: oldOwner })], 'no_stream');
    // (The service decides tuple writes on its index, which reads them from the log.)
    expect(await t.service.fga.indexes.waitFor(await t.store.lastWrittenPosition(), 10_000)).toBe(true);
    await call('POST', '/api/fga/tuples/bulk', { writes: [oldOwner], deletes: [oldViewer] });
    await call('POST', '/api/fga/tuples', tuple('plan', 'owner', ana.id));
    await call('POST', '/api/fga/tuples', tuple('plan', 'viewer', cy.id));
    await call('DELETE', '/api/fga/tuples', tuple('plan', 'viewer', cy.id));
    await call('POST', '/api/fga/tuples/bulk', { writes: [tuple('memo', 'viewer', bob.id), tuple('memo', 'owner', ana.id)], deletes: [tuple('plan', 'owner', ana.id)] });

    // Applications: created, updated, secret rotated, one deleted.
    const web = (await call('POST', '/api/applications', { name: 'portal', type: 'web', redirectUris: ['https://portal.example/cb'] })).data;
    await call('PUT', `/api/applications/${web.id}`, { allowedOrigins: ['https://portal.example'] });
    await call('POST', `/api/applications/${web.id}/rotate-secret`);
    const m2m = (await call('POST', '/api/applications', { name: 'batch', type: 'm2m', scopes: ['manage:users'] })).data;
    await call('DELETE', `/api/applications/${m2m.id}`);

    // Time passes: the sweep records the idle sessions as expired.
    clock.advance(3601_000);
    expect(await t.service.sessionSweep.sweepOnce()).toBeGreaterThan(0);
    await settle();

    const types = new Set((await t.db.pool.query<{ type: string }>('select distinct type from events')).rows.map((r) => r.type));
    for (const type of [
      'TenantCreated', 'TenantUpdated', 'TenantDeleted', 'RoleCreated', 'RoleUpdated', 'RoleDeleted', 'UserCreated', 'UserProfileUpdated',
      'UserDisabled', 'UserEnabled', 'UserDeleted', 'UserRoleAssigned', 'UserRoleRemoved', 'UserPasswordChanged', 'SessionStarted',
      'SessionRefreshed', 'SessionUsed', 'SessionRevoked', 'SessionExpired', 'LoginSucceeded', 'LoginFailed', 'AccountLocked',
      'AccountUnlocked', 'SecuritySettingsUpdated', 'FgaModelCreated', 'FgaModelUpdated', 'FgaModelActivated', 'FgaModelDeleted',
      'FgaTupleWritten', 'FgaTupleDeleted', 'FgaTuplesChanged', 'ApplicationCreated', 'ApplicationUpdated', 'ApplicationSecretRotated', 'ApplicationDeleted',
    ]) {
      expect(types, type).toContain(type);
    }
    // The consequences are facts on the log, caused by the deletions and done by the system.
    const consequences = await t.db.pool.query<{ type: string; data: any; metadata: any }>(
      "select type, data, metadata from events where (type = 'SessionRevoked' and data->>'reason' = 'user_deleted') or (type = 'UserRoleRemoved' and data->>'reason' = 'role_deleted') order by position",
    );
    // Several users are deleted (erasure deletes an active user too): a revocation names its own user's deletion.
    const deletions = await t.db.pool.query<{ id: string; type: string; user_id: string | null }>(
      "select event_id as id, type, data->>'userId' as user_id from events where type in ('UserDeleted', 'RoleDeleted')",
    );
    const causeOf = (type: string, userId?: string) => deletions.rows.find((d) => d.type === type && (userId === undefined || d.user_id === userId))!.id;
    expect(consequences.rows.map((e) => [e.type, e.data.userId, e.metadata.actor, e.metadata.causationId])).toEqual(
      expect.arrayContaining([
        ['UserRoleRemoved', ana.id, 'system', causeOf('RoleDeleted')],
        ['UserRoleRemoved', dee.id, 'system', causeOf('RoleDeleted')],
        ['SessionRevoked', dee.id, 'system', causeOf('UserDeleted', dee.id)],
      ]),
    );

    const before = await snapshotReadModels(t.db.pool, allProjections);
    expect(before.get('sessions')!.size).toBeGreaterThan(4);
    const events = await eventCount();
    const reactionCheckpoints = (await t.db.pool.query('select name, position, caused_position from reaction_checkpoints order by name')).rows;

    // What `npm run projections:rebuild -- --all` runs, while the service runs (its projections rewind and follow).
    const rebuilt: string[] = [];
    await rebuildProjections(allProjections, t.events, t.db.pool, pino({ level: 'silent' }), (name) => rebuilt.push(name));
    // Rebuilt together (one reader of the log), so each reports when it is done, in any order.
    expect(rebuilt.toSorted()).toEqual(allProjections.map((p) => p.name).toSorted());
    await settle();

    expect(diffReadModels(before, await snapshotReadModels(t.db.pool, allProjections))).toEqual([]);
    expect(await eventCount()).toBe(events);
    expect((await t.db.pool.query('select name, position, caused_position from reaction_checkpoints order by name')).rows).toEqual(reactionCheckpoints);
  });
});
