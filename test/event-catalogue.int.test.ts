import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cataloguedStore } from '../src/event-catalogue.ts';
import { DataKeys } from '../src/platform/crypto/data-keys.ts';
import { SecretBox } from '../src/platform/crypto/secret-box.ts';
import { userStreamId } from '../src/modules/users/events.ts';
import { errorStatuses } from '../src/error-statuses.ts';
import { DomainError } from '../src/platform/errors.ts';
import { wireOf } from '../src/platform/http/error-statuses.ts';
import type { EventStore, NewEvent, RecordedEvent } from '../src/platform/eventstore/port.ts';
import { newId } from '../src/platform/ids.ts';
import { PLATFORM, TEST_MASTER_KEY, startTestService, type TestService } from './support/service.ts';

const metadata = (tenantId: string) => ({ tenantId, actor: 'system', occurredAt: new Date().toISOString() });

/** UserCreated as version 1 wrote it: no schemaVersion, and an origin only for signups. */
function userCreatedV1(tenant: string, userId: string, origin?: 'signup'): NewEvent {
  const data = { userId, email: `${userId}@p.test`, username: null, firstName: 'Old', lastName: null, enabled: true, emailVerified: false, passwordHash: null, roles: [] };
  return { id: newId(), type: 'UserCreated', data: origin ? { ...data, origin } : data, metadata: metadata(tenant) };
}

function newUserCreated(userId: string, data: Record<string, unknown> = {}): NewEvent {
  const base = { userId, email: `${userId}@p.test`, username: null, firstName: null, lastName: null, enabled: true, emailVerified: false, passwordHash: null, roles: [], origin: 'import' };
  return { id: newId(), type: 'UserCreated', data: { ...base, ...data }, metadata: metadata(PLATFORM) };
}

async function rejection(promise: Promise<unknown>): Promise<DomainError> {
  const error = await promise.then(() => null, (e: unknown) => e);
  expect(error).toBeInstanceOf(DomainError);
  return error as DomainError;
}

describe('the event catalogue around the event store', () => {
  let t: TestService;
  let store: EventStore;
  beforeAll(async () => {
    t = await startTestService();
    store = cataloguedStore(t.store, new DataKeys(t.db.pool, new SecretBox(TEST_MASTER_KEY)));
  });
  afterAll(() => t.close());

  it('refuses an unknown type and data that fits no schema, naming the type and the failing path, and writes nothing', async () => {
    const userId = newId();
    const ownStream = userStreamId(PLATFORM, userId);
    const otherStream = userStreamId(PLATFORM, newId());
    const unknown = await rejection(store.append(ownStream, [{ ...newUserCreated(userId), type: 'UserTeleported' }]));
    expect(unknown.code).toBe('EVENT_SCHEMA_VIOLATION');
    expect(wireOf(errorStatuses, unknown.code).status).toBe(500);
    expect(unknown.message).toContain('UserTeleported');

    const good = newUserCreated(newId());
    const bad = newUserCreated(userId, { origin: 'guessed', roles: [{ id: 'r1' }], passwordHash: 987654321 });
    const violation = await rejection(
      store.appendMulti([
        { streamId: otherStream, expectedRevision: 'no_stream', events: [good] },
        { streamId: ownStream, expectedRevision: 'no_stream', events: [bad] },
      ]),
    );
    expect(violation.code).toBe('EVENT_SCHEMA_VIOLATION');
    expect(violation.message).toContain('UserCreated');
    expect(violation.message).toContain('data.origin');
    expect(violation.message).toContain('data.roles.0.name');
    expect(violation.message).toContain('data.passwordHash');
    expect(violation.message).not.toContain('987654321');
    // All or nothing: the valid stream of the same append was not written either.
    expect(await t.store.readStream(otherStream)).toEqual([]);
    expect(await t.store.readStream(ownStream)).toEqual([]);
  });

  it('records the version each event was written in', async () => {
    const userId = newId();
    await store.append(userStreamId(PLATFORM, userId), [newUserCreated(userId)]);
    const [raw] = await t.store.readStream(userStreamId(PLATFORM, userId));
    expect(raw!.metadata.schemaVersion).toBe(2);
    expect(raw!.data).toMatchObject({ origin: 'import' });
  });

  it('reads version-1 events written before versions existed as the current version (stream, log and subscription)', async () => {
    const admin = newId();
    const signedUp = newId();
    const from = await t.store.headPosition();
    await t.store.append(userStreamId(PLATFORM, admin), [userCreatedV1(PLATFORM, admin)]);
    const { position: last } = await t.store.append(userStreamId(PLATFORM, signedUp), [userCreatedV1(PLATFORM, signedUp, 'signup')]);
    const expectCurrent = (events: RecordedEvent[]) => {
      const ours = events.filter((event) => [admin, signedUp].includes((event.data as { userId: string }).userId));
      expect(ours.map((event) => [(event.data as { origin: string }).origin, event.metadata.schemaVersion])).toEqual([
        ['admin', 2],
        ['signup', 2],
      ]);
    };

    expect((await t.store.readStream(userStreamId(PLATFORM, admin)))[0]!.data).not.toHaveProperty('origin');
    expectCurrent([...(await store.readStream(userStreamId(PLATFORM, admin))), ...(await store.readStream(userStreamId(PLATFORM, signedUp)))]);
    // Global readers see an event once no older transaction of the shared cluster is still open.
    const ours = (events: RecordedEvent[]) => events.filter((event) => event.position <= last);
    await expect.poll(async () => ours(await store.readAll(from, 1000)).at(-1)?.position, { timeout: 10_000 }).toBe(last);
    expectCurrent(await store.readAll(from, 1000));
    const delivered: RecordedEvent[] = [];
    const subscription = store.subscribeToAll({ after: from, onEvents: async (events) => void delivered.push(...events) });
    try {
      await expect.poll(() => delivered.at(-1)?.position, { timeout: 10_000 }).toBeGreaterThanOrEqual(last);
    } finally {
      await subscription.close();
    }
    expectCurrent(delivered);
  });

  it('projects a version-1 UserCreated into the users read model', async () => {
    const userId = newId();
    const { position } = await t.store.append(userStreamId(PLATFORM, userId), [userCreatedV1(PLATFORM, userId)]);
    expect(await t.service.runner.waitFor(position, 10_000, ['users'])).toBe(true);
    const token = await t.token({ sub: 'root', tenant: PLATFORM, roles: ['admin'] });
    const read = await t.request({ method: 'GET', url: `/api/users/${userId}`, tenant: PLATFORM, token });
    expect(read.status).toBe(200);
    expect(read.body.data).toMatchObject({ id: userId, email: `${userId}@p.test`, firstName: 'Old' });
  });

  it('records origin admin for a user an administrator creates', async () => {
    const token = await t.token({ sub: 'root', tenant: PLATFORM, roles: ['admin'] });
    const created = await t.request({ method: 'POST', url: '/api/users', tenant: PLATFORM, token, body: { email: 'made@p.test', password: 'Passw0rd!x' } });
    expect(created.status).toBe(201);
    const [event] = await t.store.readStream(userStreamId(PLATFORM, created.body.data.id));
    expect(event!.data).toMatchObject({ origin: 'admin' });
    expect(event!.metadata.schemaVersion).toBe(2);
  });
});

describe('GET /api/asyncapi.json', () => {
  it('serves the events document without tenant or token, on the configured topic', async () => {
    const t = await startTestService({ env: { KAFKA_TOPIC: 'acme.iam.events' } });
    try {
      const { status, body } = await t.request({ method: 'GET', url: '/api/asyncapi.json' });
      expect(status).toBe(200);
      expect(body).toMatchObject({ asyncapi: '3.0.0', channels: { events: { address: 'acme.iam.events' } } });
      expect(Object.keys(body.components.messages)).toContain('UserCreated');
    } finally {
      await t.close();
    }
  });
});
