import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { cataloguedStore } from '../../../src/event-catalogue.ts';
import { ReservationNames } from '../../../src/platform/commands/reservation-names.ts';
import { DataKeys } from '../../../src/platform/crypto/data-keys.ts';
import { SecretBox } from '../../../src/platform/crypto/secret-box.ts';
import type { RecordedEvent } from '../../../src/platform/eventstore/port.ts';
import { newId } from '../../../src/platform/ids.ts';
import { rebuildProjections } from '../../../src/platform/projections/rebuild.ts';
import { allProjections } from '../../../src/projections.ts';
import { userStreamId } from '../../../src/modules/users/index.ts';
import { PasswordHasher } from '../../../src/modules/users/passwords.ts';
import { diffReadModels, snapshotReadModels } from '../../support/read-models.ts';
import { PLATFORM, TEST_MASTER_KEY, startTestService, type TestService } from '../../support/service.ts';

const ROOT = { email: 'root@platform.test', password: 'Sup3rSecret!' };
const UA = 'erasure-test/1.0';
const ERASED = '[ERASED]';

describe('GDPR erasure by crypto-shredding: POST /api/users/{id}/erase', () => {
  let t: TestService;
  const admins: Record<string, string> = {};

  const login = (tenant: string, email: string, password: string) =>
    t.request({ method: 'POST', url: '/api/auth/login', tenant, body: { email, password }, headers: { 'user-agent': UA }, remoteAddress: '198.51.100.9' });
  const call = (method: string, url: string, tenant = 'acme', body?: unknown, token = admins[tenant]!) =>
    t.request({ method, url, body, token, tenant, headers: { 'user-agent': UA } });
  const caughtUp = async () => expect(await t.service.runner.waitFor(await t.store.lastWrittenPosition(), 10_000)).toBe(true);
  const rawLog = async () => (await t.db.pool.query('select event_id, stream_id, type, data, metadata from events order by position')).rows;
  const auditOf = async (userId: string) => (await t.db.pool.query("select action, metadata, client_ip, user_agent from audit_log where tenant_id = 'acme' and resource_id = $1 order by created_at, id", [userId])).rows;
  /** A fresh process's view of the log (`npm run projections:rebuild` opens its own keys): no cache can answer. */
  const freshStore = () => cataloguedStore(t.store, new DataKeys(t.db.pool, new SecretBox(TEST_MASTER_KEY)));

  beforeAll(async () => {
    t = await startTestService({ env: { IAM_BOOTSTRAP_ADMIN_EMAIL: ROOT.email, IAM_BOOTSTRAP_ADMIN_PASSWORD: ROOT.password } });
    const root = (await login(PLATFORM, ROOT.email, ROOT.password)).body.data.accessToken;
    for (const name of ['acme', 'globex']) {
      const body = { name, adminEmail: `admin@${name}.test`, adminPassword: 'Adm1n-Pass' };
      expect((await t.request({ method: 'POST', url: '/api/tenants', tenant: PLATFORM, token: root, body })).status).toBe(201);
      admins[name] = (await login(name, `admin@${name}.test`, 'Adm1n-Pass')).body.data.accessToken;
    }
  });
  afterAll(() => t.close());

  it('stores personal fields encrypted; after erasure every read shows [ERASED], the e-mail is free, and nothing else in the log changed', async () => {
    const created = await call('POST', '/api/users', 'acme', { email: 'jane@acme.test', username: 'jane.doe', firstName: 'Jane', lastName: 'Doe', password: 'Str0ngPass!' });
    expect(created.status).toBe(201);
    const id: string = created.body.data.id;
    expect((await call('PUT', `/api/users/${id}`, 'acme', { lastName: 'Roe' })).status).toBe(200);
    expect((await login('acme', 'jane@acme.test', 'Str0ngPass!')).status).toBe(200);
    await caughtUp();
    const asOf = new Date().toISOString();

    // Before: clear to every reader, sealed in the log itself.
    expect((await call('GET', `/api/users/${id}`)).body.data).toMatchObject({ email: 'jane@acme.test', username: 'jane.doe', firstName: 'Jane', lastName: 'Roe' });
    const before = await rawLog();
    const janes = before.filter((e) => JSON.stringify(e.data).includes(id) || e.data.owner === userStreamId('acme', id));
    expect(janes.map((e) => e.type)).toEqual(expect.arrayContaining(['UserCreated', 'UserProfileUpdated', 'ReservationClaimed', 'SessionStarted']));
    for (const event of janes) {
      expect(JSON.stringify(event.data)).not.toMatch(/jane@acme\.test|Jane|Roe|198\.51\.100\.9|erasure-test/);
    }
    expect(janes.find((e) => e.type === 'UserCreated')!.metadata.personalDataKey).toBe(userStreamId('acme', id));
    // Request metadata is sealed too, in every event so far (each actor is a user of its tenant).
    expect(JSON.stringify(before)).not.toContain('198.51.100.9');
    expect(JSON.stringify(before)).not.toContain(UA);
    const requestData = async () =>
      (await call('GET', `/api/events?streamPrefix=${encodeURIComponent(userStreamId('acme', id))}`)).body.data.events.map((e: { type: string; metadata: object }) => ({ type: e.type, ...e.metadata }));
    // (The feed may show fewer events for a moment: see the wait after the erasure below.)
    await vi.waitFor(async () => expect(await requestData()).toEqual([expect.objectContaining({ userAgent: UA, clientIp: '127.0.0.1' }), expect.objectContaining({ userAgent: UA })]));
    expect((await auditOf(id)).map((e) => e.user_agent)).toEqual([UA, UA, UA]);
    expect((await auditOf(id)).find((e) => e.action === 'LOGIN')!.client_ip).toBe('198.51.100.9');

    const erased = await call('POST', `/api/users/${id}/erase`);
    expect(erased.status).toBe(200);
    expect(erased.body).toEqual({ ok: true, data: { erased: true } });
    await caughtUp();

    // The log: every earlier event byte for byte, then the erasure's own events.
    const after = await rawLog();
    expect(after.slice(0, before.length)).toEqual(before);
    expect(after.slice(before.length).map((e) => e.type)).toEqual(expect.arrayContaining(['UserDeleted', 'UserErased', 'ReservationReleased', 'SessionRevoked']));
    // Neither the e-mail nor the username is anywhere in the events table: data, metadata or stream id.
    // ('.' and '@' never occur in ciphertext or keyed names, so a match cannot be chance.)
    const everything = JSON.stringify((await t.db.pool.query('select * from events')).rows);
    expect(everything).not.toContain('jane@acme.test');
    expect(everything).not.toContain('jane.doe');

    // Read models, history, point-in-time state, audit.
    expect((await call('GET', `/api/users/${id}`)).status).toBe(404);
    const then = await call('GET', `/api/users/${id}?asOf=${encodeURIComponent(asOf)}`);
    expect(then.status).toBe(200);
    expect(then.body.data).toMatchObject({ id, email: ERASED, username: ERASED, firstName: ERASED, lastName: ERASED, enabled: true, roles: ['user'] });
    const history = (await call('GET', `/api/users/${id}/history`)).body.data as { type: string; data: Record<string, unknown> }[];
    expect(history.map((h) => h.type)).toEqual(['UserCreated', 'UserProfileUpdated', 'UserDeleted', 'UserErased']);
    expect(history[0]!.data).toMatchObject({ email: ERASED, username: ERASED, firstName: ERASED, lastName: ERASED, passwordHash: '[REDACTED]', enabled: true });
    expect(history[1]!.data).toEqual({ userId: id, lastName: ERASED });
    const sessions = (await t.db.pool.query("select ip_address, user_agent, device, revoked from sessions where tenant_id = 'acme' and user_id = $1", [id])).rows;
    expect(sessions).toEqual([{ ip_address: ERASED, user_agent: ERASED, device: 'Unknown device', revoked: true }]);
    const audit = await auditOf(id);
    expect(audit.map((e) => e.action)).toEqual(['USER_CREATED', 'USER_UPDATED', 'LOGIN', 'USER_DELETED', 'USER_ERASED']);
    expect(audit[0]!.metadata.after).toMatchObject({ email: ERASED, username: ERASED, firstName: ERASED, lastName: ERASED, roles: ['user'], enabled: true });
    expect(audit[1]!.metadata).toMatchObject({ before: { email: ERASED, lastName: ERASED }, after: { email: ERASED, lastName: ERASED } });
    expect(JSON.stringify(await t.db.pool.query('select * from audit_log')).includes('jane@acme.test')).toBe(false);
    expect(audit.map((e) => [e.client_ip, e.user_agent])).toEqual(audit.map(() => [ERASED, ERASED]));
    // Events with Jane's personal fields had their request metadata sealed with her key too; UserErased
    // carries no personal field, so the admin's request was sealed with the (acting) admin's key.
    // The feed shows positions under the log's visibility bound, which a transaction of the cluster
    // finishing at the moment of the read holds back (events_visible_bound cannot tell then whether
    // it appended): a reader may see fewer events for that moment, never other ones, so this waits.
    await vi.waitFor(async () =>
      expect((await requestData()).map((m: { type: string; clientIp: string; userAgent: string }) => [m.type, m.clientIp, m.userAgent])).toEqual([
        ['UserCreated', ERASED, ERASED],
        ['UserProfileUpdated', ERASED, ERASED],
        ['UserDeleted', ERASED, ERASED],
        ['UserErased', '127.0.0.1', UA],
      ]),
    );

    // The e-mail and username are free again.
    const again = await call('POST', '/api/users', 'acme', { email: 'jane@acme.test', username: 'jane.doe' });
    expect(again.status).toBe(201);
    expect(again.body.data.id).not.toBe(id);

    // A fresh process reads "[ERASED]" too (the key is gone from the database, not only from a cache),
    // and a full replay rebuilds every read model identically.
    const replayed = (await freshStore().readStream(userStreamId('acme', id))) as RecordedEvent<string, Record<string, unknown>>[];
    expect(replayed[0]!.data).toMatchObject({ email: ERASED, firstName: ERASED });
    await caughtUp();
    const models = await snapshotReadModels(t.db.pool, allProjections);
    await rebuildProjections(allProjections, freshStore(), t.db.pool, pino({ level: 'silent' }));
    await caughtUp();
    expect(diffReadModels(models, await snapshotReadModels(t.db.pool, allProjections))).toEqual([]);
  });

  it('answers the same when erasing twice, appends nothing the second time; 404 for an unknown id or another tenant', async () => {
    const id = (await call('POST', '/api/users', 'acme', { email: 'twice@acme.test' })).body.data.id;
    expect((await call('POST', `/api/users/${id}/erase`)).body).toEqual({ ok: true, data: { erased: true } });
    const stream = await t.store.readStream(userStreamId('acme', id));
    const second = await call('POST', `/api/users/${id}/erase`);
    expect(second.status).toBe(200);
    expect(second.body).toEqual({ ok: true, data: { erased: true } });
    expect(await t.store.readStream(userStreamId('acme', id))).toEqual(stream);

    expect((await call('POST', `/api/users/${newId()}/erase`)).status).toBe(404);
    const other = (await call('POST', '/api/users', 'acme', { email: 'kept@acme.test' })).body.data.id;
    const foreign = await call('POST', `/api/users/${other}/erase`, 'globex');
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe('NOT_FOUND');
    expect((await call('GET', `/api/users/${other}`)).body.data.email).toBe('kept@acme.test');
  });

  it('needs admin:all', async () => {
    const id = (await call('POST', '/api/users', 'acme', { email: 'guarded@acme.test' })).body.data.id;
    const manager = await t.token({ sub: newId(), tenant: 'acme', roles: ['user'] });
    const refused = await call('POST', `/api/users/${id}/erase`, 'acme', undefined, manager);
    expect(refused.status).toBe(403);
    expect((await call('GET', `/api/users/${id}`)).body.data.email).toBe('guarded@acme.test');
  });

  it('reads events written before encryption in clear, and erases them too', async () => {
    const id = newId();
    const metadata = { tenantId: 'acme', actor: 'system', occurredAt: new Date().toISOString() };
    // UserCreated as version 1 wrote it, before personal fields were encrypted: straight into the raw store.
    const legacy = { userId: id, email: 'old@acme.test', username: null, firstName: 'Old', lastName: null, enabled: true, emailVerified: false, passwordHash: null, roles: [] };
    await t.store.append(userStreamId('acme', id), [{ id: newId(), type: 'UserCreated', data: legacy, metadata }], 'no_stream');
    await caughtUp();
    expect((await call('GET', `/api/users/${id}`)).body.data).toMatchObject({ email: 'old@acme.test', firstName: 'Old' });
    expect((await call('GET', `/api/users/${id}/history`)).body.data[0].data).toMatchObject({ email: 'old@acme.test', origin: 'admin' });

    expect((await call('POST', `/api/users/${id}/erase`)).status).toBe(200);
    expect((await call('GET', `/api/users/${id}/history`)).body.data[0].data).toMatchObject({ email: ERASED, firstName: ERASED, username: null });
    const [replayed] = (await freshStore().readStream(userStreamId('acme', id))) as RecordedEvent<string, Record<string, unknown>>[];
    expect(replayed!.data).toMatchObject({ email: ERASED, firstName: ERASED });
  });

  it('keeps values reserved under clear-text stream names (before keyed names) taken, and releases them there', async () => {
    const id = newId();
    const owner = userStreamId('acme', id);
    const metadata = { tenantId: 'acme', actor: 'system', occurredAt: new Date().toISOString() };
    const passwordHash = await new PasswordHasher({ memoryCost: 1024, timeCost: 1, parallelism: 1 }).hash('Legacy-Pass1');
    const created = { userId: id, email: 'legacy@acme.test', username: 'legacy.user', firstName: null, lastName: null, enabled: true, emailVerified: false, passwordHash, roles: [] };
    const claimed = (kind: string, value: string) => ({ id: newId(), type: 'ReservationClaimed', data: { kind, value, owner }, metadata });
    // The account and its reservations as the service wrote them before: clear values, clear-text stream names.
    await t.store.appendMulti([
      { streamId: owner, expectedRevision: 'no_stream', events: [{ id: newId(), type: 'UserCreated', data: created, metadata }] },
      { streamId: 'reservation-acme.email.legacy@acme.test', expectedRevision: 'no_stream', events: [claimed('email', 'legacy@acme.test')] },
      { streamId: 'reservation-acme.username.legacy.user', expectedRevision: 'no_stream', events: [claimed('username', 'legacy.user')] },
    ]);
    await caughtUp();

    expect((await call('POST', '/api/users', 'acme', { email: 'LEGACY@acme.test' })).body.error.code).toBe('EMAIL_TAKEN');
    expect((await call('POST', '/api/users', 'acme', { email: 'other-legacy@acme.test', username: 'Legacy.User' })).body.error.code).toBe('USERNAME_TAKEN');
    expect((await login('acme', 'legacy@acme.test', 'Legacy-Pass1')).status).toBe(200);

    // Deleting the account releases the values in the streams that hold them.
    expect((await call('DELETE', `/api/users/${id}`)).status).toBe(200);
    const typesIn = async (streamId: string) => (await t.store.readStream(streamId)).map((e) => e.type);
    expect(await typesIn('reservation-acme.email.legacy@acme.test')).toEqual(['ReservationClaimed', 'ReservationReleased']);
    expect(await typesIn('reservation-acme.username.legacy.user')).toEqual(['ReservationClaimed', 'ReservationReleased']);

    // Free again; the new claim goes to the keyed stream, and holds there.
    const names = new ReservationNames(TEST_MASTER_KEY);
    expect((await call('POST', '/api/users', 'acme', { email: 'legacy@acme.test', username: 'legacy.user' })).status).toBe(201);
    expect(await typesIn(names.streamsOf('acme', 'email', 'legacy@acme.test').keyed)).toEqual(['ReservationClaimed']);
    expect(await typesIn(names.streamsOf('acme', 'username', 'legacy.user').keyed)).toEqual(['ReservationClaimed']);
    expect((await call('POST', '/api/users', 'acme', { email: 'Legacy@acme.test' })).body.error.code).toBe('EMAIL_TAKEN');
  });
});
