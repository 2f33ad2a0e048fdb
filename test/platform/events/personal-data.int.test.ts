import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventCatalogue } from '../../../src/event-catalogue.ts';
import { userStreamId } from '../../../src/modules/users/index.ts';
import { DataKeys } from '../../../src/platform/crypto/data-keys.ts';
import { SecretBox } from '../../../src/platform/crypto/secret-box.ts';
import type { Queryable } from '../../../src/platform/db/pool.ts';
import type { NewEvent, RecordedEvent } from '../../../src/platform/eventstore/port.ts';
import { ERASED, PersonalDataCipher } from '../../../src/platform/events/personal-data.ts';
import { newId } from '../../../src/platform/ids.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';

/** The pool, counting the statements it is given (the cost the cache must keep down). */
function countingPool(db: TestDatabase): Queryable & { statements: number } {
  const counting = {
    statements: 0,
    query: ((...args: Parameters<Queryable['query']>) => {
      counting.statements += 1;
      return (db.pool.query as (...a: unknown[]) => unknown)(...args);
    }) as Queryable['query'],
  };
  return counting;
}

const profileUpdate = (tenantId: string, userId: string, firstName: string): NewEvent => ({
  id: newId(),
  type: 'UserProfileUpdated',
  data: { userId, firstName },
  metadata: { tenantId, actor: 'system', occurredAt: new Date().toISOString() },
});
const recorded = (events: NewEvent[]): RecordedEvent[] =>
  events.map((event, i) => ({ ...event, streamId: userStreamId(event.metadata.tenantId, (event.data as { userId: string }).userId), revision: 0n, position: BigInt(i + 1) }));

describe('PersonalDataCipher and DataKeys', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(() => db.drop());

  it('seals a batch with one key statement, reveals it again without any, and a fresh instance with one query', async () => {
    const box = new SecretBox('k');
    const pool = countingPool(db);
    const cipher = new PersonalDataCipher(eventCatalogue, new DataKeys(pool, box));
    const users = Array.from({ length: 20 }, () => newId());
    const events = Array.from({ length: 200 }, (_, i) => profileUpdate('acme', users[i % 20]!, `Name ${i}`));

    const sealed = await cipher.seal(events);
    // One statement creates the 20 missing keys (and would read existing ones).
    expect(pool.statements).toBe(1);
    expect(sealed.every((event) => String((event.data as { firstName: string }).firstName).startsWith('pd1.'))).toBe(true);
    expect(sealed[0]!.metadata.personalDataKey).toBe(userStreamId('acme', users[0]!));

    const revealed = await cipher.reveal(recorded(sealed));
    expect(pool.statements).toBe(1);
    expect(revealed.map((event) => (event.data as { firstName: string }).firstName)).toEqual(events.map((event) => (event.data as { firstName: string }).firstName));
    expect(revealed[0]!.metadata).not.toHaveProperty('personalDataKey');

    const freshPool = countingPool(db);
    const fresh = new PersonalDataCipher(eventCatalogue, new DataKeys(freshPool, box));
    expect((await fresh.reveal(recorded(sealed)))[199]!.data).toEqual(events[199]!.data);
    expect(freshPool.statements).toBe(1);
  });

  it('reads an erased person as [ERASED], sealed or written in clear, and writes nothing personal for them', async () => {
    const box = new SecretBox('k');
    const keys = new DataKeys(db.pool, box);
    const cipher = new PersonalDataCipher(eventCatalogue, keys);
    const [sealedUser, legacyUser] = [newId(), newId()];
    const sealed = await cipher.seal([profileUpdate('acme', sealedUser, 'Sealed')]);
    const legacy = profileUpdate('acme', legacyUser, 'Clear');
    for (const userId of [sealedUser, legacyUser]) await keys.erase({ tenantId: 'acme', subject: userStreamId('acme', userId) });

    const other = new PersonalDataCipher(eventCatalogue, new DataKeys(db.pool, box));
    expect((await other.reveal(recorded([...sealed, legacy]))).map((event) => event.data)).toEqual([
      { userId: sealedUser, firstName: ERASED },
      { userId: legacyUser, firstName: ERASED },
    ]);
    expect((await cipher.seal([profileUpdate('acme', sealedUser, 'Again')]))[0]!.data).toEqual({ userId: sealedUser, firstName: ERASED });
    // The same id in another tenant is another person.
    expect((await cipher.reveal(recorded([profileUpdate('globex', sealedUser, 'Kept')])))[0]!.data).toEqual({ userId: sealedUser, firstName: 'Kept' });
  });

  it('forgets a cached key when it reads the erasure event (another instance erased the person)', async () => {
    const box = new SecretBox('k');
    const cipher = new PersonalDataCipher(eventCatalogue, new DataKeys(db.pool, box));
    const userId = newId();
    const sealed = recorded(await cipher.seal([profileUpdate('acme', userId, 'Cached')]));
    expect((await cipher.reveal(sealed))[0]!.data).toEqual({ userId, firstName: 'Cached' });

    await new DataKeys(db.pool, box).erase({ tenantId: 'acme', subject: userStreamId('acme', userId) });
    const erasure = recorded([{ ...profileUpdate('acme', userId, ''), type: 'UserErased', data: { userId } }]);
    const [, again] = await cipher.reveal([...erasure, ...sealed]);
    expect(again!.data).toEqual({ userId, firstName: ERASED });
  });

  it('reveals its own fresh seals as sealed, and never a ciphertext moved under another person\'s key', async () => {
    const cipher = new PersonalDataCipher(eventCatalogue, new DataKeys(db.pool, new SecretBox('k')));
    const [owner, other] = [newId(), newId()];
    const [mine, theirs] = await cipher.seal([profileUpdate('acme', owner, 'Owner'), profileUpdate('acme', other, 'Other')]);
    expect((await cipher.reveal(recorded([mine!])))[0]!.data).toEqual({ userId: owner, firstName: 'Owner' });
    // The owner's ciphertext in an event of the other person (sealed with the other's key): opened under that key, it fails.
    const moved = { ...theirs!, data: { userId: other, firstName: (mine!.data as { firstName: string }).firstName } };
    await expect(cipher.reveal(recorded([moved]))).rejects.toThrow();
  });

  it('seals clientIp and userAgent with the data subject\'s key, else the acting user\'s if they have one; one key statement per batch', async () => {
    const box = new SecretBox('k');
    const pool = countingPool(db);
    const cipher = new PersonalDataCipher(eventCatalogue, new DataKeys(pool, box));
    const [subject, actingUser] = [newId(), newId()];
    await new DataKeys(db.pool, box).keysForWriting([{ tenantId: 'acme', subject: userStreamId('acme', actingUser) }]);
    const request = { clientIp: '203.0.113.7', userAgent: 'agent/1.0' };
    const withRequest = (event: NewEvent, actor: string): NewEvent => ({ ...event, metadata: { ...event.metadata, actor, ...request } });
    const roleDeleted = (actor: string): NewEvent =>
      withRequest({ id: newId(), type: 'RoleDeleted', data: { roleId: newId(), name: 'r' }, metadata: { tenantId: 'acme', actor: 'x', occurredAt: new Date().toISOString() } }, actor);
    const events = [withRequest(profileUpdate('acme', subject, 'Subject'), actingUser), roleDeleted(actingUser), roleDeleted('client-app')];

    const sealed = await cipher.seal(events);
    // One statement: the subject's key created, the acting user's read, the client found keyless.
    expect(pool.statements).toBe(1);
    expect(sealed.map((event) => event.metadata.personalDataKey)).toEqual([userStreamId('acme', subject), userStreamId('acme', actingUser), undefined]);
    for (const event of sealed.slice(0, 2)) {
      expect(event.metadata.clientIp).toMatch(/^pd1\./);
      expect(event.metadata.userAgent).toMatch(/^pd1\./);
    }
    expect(sealed[2]!.metadata).toMatchObject(request);
    expect(await cipher.seal([roleDeleted('client-app'), roleDeleted(actingUser)])).toHaveLength(2);
    expect(pool.statements).toBe(1);

    const fresh = () => new PersonalDataCipher(eventCatalogue, new DataKeys(db.pool, box));
    expect((await fresh().reveal(recorded(sealed))).map((event) => event.metadata)).toEqual(events.map((event) => event.metadata));

    // A legacy event (written before metadata was sealed) of the acting user reads in clear, then erased with the rest.
    const legacy = roleDeleted(actingUser);
    expect((await fresh().reveal(recorded([legacy])))[0]!.metadata).toMatchObject(request);
    await new DataKeys(db.pool, box).erase({ tenantId: 'acme', subject: userStreamId('acme', actingUser) });
    const erased = { clientIp: ERASED, userAgent: ERASED };
    const after = await fresh().reveal(recorded([...sealed, legacy]));
    expect(after.map((event) => event.metadata)).toEqual([
      expect.objectContaining(request), // sealed under the subject's key, who was not erased
      expect.objectContaining(erased),
      expect.objectContaining(request), // a client: nobody to erase
      expect.objectContaining(erased),
    ]);
    expect((await fresh().seal([roleDeleted(actingUser)]))[0]!.metadata).toMatchObject(erased);
  });

  it('seals a value that several fields of one append hold once (a login: clientIp and userAgent in both events and the session), never across appends', async () => {
    const box = new SecretBox('k');
    const cipher = new PersonalDataCipher(eventCatalogue, new DataKeys(db.pool, box));
    const userId = newId();
    const sessionId = newId();
    const metadata = { tenantId: 'acme', actor: userId, occurredAt: new Date().toISOString(), clientIp: '203.0.113.7', userAgent: 'agent/1.0' };
    const login = (): NewEvent[] => [
      { id: newId(), type: 'LoginSucceeded', data: { userId, sessionId, method: 'password' }, metadata },
      {
        id: newId(),
        type: 'SessionStarted',
        data: { sessionId, userId, startedAt: metadata.occurredAt, ipAddress: '203.0.113.7', userAgent: 'agent/1.0', expiresAt: metadata.occurredAt, acr: 'aal1', amr: ['pwd'] },
        metadata,
      },
    ];
    const [succeeded, started] = await cipher.seal(login());
    const ip = succeeded!.metadata.clientIp!;
    expect(ip).toMatch(/^pd1\./);
    expect([started!.metadata.clientIp, (started!.data as { ipAddress: string }).ipAddress]).toEqual([ip, ip]);
    expect((started!.data as { userAgent: string }).userAgent).toBe(succeeded!.metadata.userAgent);
    expect(succeeded!.metadata.userAgent).not.toBe(ip);
    // Another append seals the same value afresh (its own IV).
    expect((await cipher.seal(login()))[0]!.metadata.clientIp).not.toBe(ip);

    const revealed = await new PersonalDataCipher(eventCatalogue, new DataKeys(db.pool, box)).reveal(recorded([succeeded!, started!]));
    expect(revealed.map((event) => [event.metadata.clientIp, event.metadata.userAgent])).toEqual([
      ['203.0.113.7', 'agent/1.0'],
      ['203.0.113.7', 'agent/1.0'],
    ]);
    expect(revealed[1]!.data).toMatchObject({ ipAddress: '203.0.113.7', userAgent: 'agent/1.0' });
  });

  it('lets the audit log be rewritten only by the erasure writer, and only its metadata', async () => {
    const id = newId();
    await db.pool.query("insert into audit_log (tenant_id, id, action, status, metadata, created_at) values ('acme', $1, 'USER_CREATED', 'success', '{}', now())", [id]);
    await expect(db.pool.query("update audit_log set metadata = '{\"a\":1}' where id = $1", [id])).rejects.toThrow(/append-only \(UPDATE/);
    const client = await db.pool.connect();
    try {
      await client.query('begin');
      await client.query("select set_config('iam.audit_erasure', 'on', true)");
      await expect(client.query("update audit_log set action = 'X' where id = $1", [id])).rejects.toThrow(/personal data only/);
      await client.query('rollback');
      await client.query('begin');
      await client.query("select set_config('iam.audit_erasure', 'on', true)");
      await client.query("update audit_log set metadata = '{\"a\":1}' where id = $1", [id]);
      await client.query('commit');
    } finally {
      client.release();
    }
    expect((await db.pool.query('select metadata from audit_log where id = $1', [id])).rows[0].metadata).toEqual({ a: 1 });
    await expect(db.pool.query('delete from audit_log where id = $1', [id])).rejects.toThrow(/append-only \(DELETE/);
  });
});
