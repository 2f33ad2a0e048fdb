import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditProjection } from '../../projections/audit.ts';
import { fgaHistoryProjection } from '../../projections/fga-history.ts';
import { sessionsProjection } from '../../projections/sessions.ts';
import { usersProjection } from '../../projections/users.ts';
import { withTransaction } from '../../src/platform/db/pool.ts';
import type { RecordedEvent } from '../../src/platform/eventstore/port.ts';
import { newId } from '../../src/platform/ids.ts';
import { applyEvents, type Projection } from '../../src/platform/projections/projection.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';

let position = 0n;
const at = (minute: number) => new Date(Date.UTC(2025, 0, 1, 12, minute)).toISOString();
function recorded(type: string, data: unknown, minute: number, tenantId = 'acme'): RecordedEvent {
  position += 1n;
  return { id: newId(), streamId: `test-${tenantId}.${newId()}`, revision: 0n, position, type, data, metadata: { tenantId, actor: 'system', occurredAt: at(minute) } };
}

const [alice, bob, carol] = [newId(), newId(), newId()];
const [roleA, roleB] = [newId(), newId()];
const user = (userId: string, email: string, roles: string[]) => ({
  userId, email, username: email.split('@')[0], firstName: 'First', lastName: null, enabled: true, emailVerified: false, passwordHash: null,
  roles: roles.map((id) => ({ id, name: id })),
});
const [s1, s2] = [newId(), newId()];
const session = (sessionId: string, userId: string, minute: number) => ({
  sessionId, userId, startedAt: at(minute), refreshTokenHash: 'h', refreshExpiresAt: at(600), ipAddress: '10.0.0.1',
  userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Firefox/121.0', expiresAt: at(300), idleTimeoutSeconds: 1800, refreshTokenLifetimeSeconds: 36000, acr: 'aal1', amr: ['pwd'],
});
const tuple = (objectId: string, subjectId: string) => ({ tuple: { objectType: 'document', objectId, relation: 'viewer', subjectType: 'user', subjectId }, modelId: newId() });
// One request's changes in one event: runs of writes and deletes inside and across events.
const changed = (writes: [string, string][], deletes: [string, string][] = []) => ({
  ...(writes.length > 0 ? { modelId: newId() } : {}),
  writes: writes.map(([objectId, subjectId]) => tuple(objectId, subjectId).tuple),
  deletes: deletes.map(([objectId, subjectId]) => tuple(objectId, subjectId).tuple),
});
const tupleRequests = () => [
  recorded('FgaTuplesChanged', changed([['d4', 'alice'], ['d5', 'bob']], [['d3', 'bob']]), 8),
  recorded('FgaTuplesChanged', changed([['d6', 'carol']]), 8, 'other'),
  recorded('FgaTuplesChanged', changed([], [['d4', 'alice'], ['d2', 'alice']]), 9),
  recorded('FgaTuplesChanged', changed([['d4', 'alice'], ['d3', 'bob']], [['d5', 'bob']]), 10),
];

// Runs of the batch-handled types with what makes batching risky: repeats of a key inside a run,
// out-of-order times, events of other types and of other tenants in between.
const cases: [Projection, RecordedEvent[]][] = [
  [
    usersProjection,
    [
      recorded('UserCreated', user(alice, 'alice@acme.test', [roleA, roleB]), 1),
      recorded('ReservationClaimed', { kind: 'email', value: 'x', owner: 'y' }, 1),
      recorded('UserCreated', user(bob, 'bob@acme.test', []), 2),
      recorded('UserCreated', user(alice, 'alice.again@acme.test', [roleA]), 3),
      recorded('UserCreated', user(carol, 'carol@other.test', [roleB]), 3, 'other'),
      recorded('LoginSucceeded', { userId: alice, sessionId: s1, method: 'password' }, 10),
      recorded('LoginSucceeded', { userId: bob, sessionId: s2, method: 'password' }, 11),
      recorded('LoginSucceeded', { userId: alice, sessionId: s1, method: 'password' }, 12),
      recorded('LoginSucceeded', { userId: alice, sessionId: s1, method: 'password' }, 9),
      recorded('UserDisabled', { userId: bob }, 13),
      recorded('LoginSucceeded', { userId: bob, sessionId: s2, method: 'password' }, 14),
    ],
  ],
  [
    sessionsProjection,
    [
      recorded('SessionStarted', session(s1, alice, 1), 1),
      recorded('SessionStarted', session(s2, bob, 2), 2),
      recorded('SessionStarted', session(s1, bob, 3), 3),
      recorded('SessionRefreshed', { sessionId: s1, refreshedAt: at(20), refreshTokenHash: 'h2', refreshExpiresAt: at(600) }, 20),
      recorded('SessionRefreshed', { sessionId: s1, refreshedAt: at(15), refreshTokenHash: 'h3', refreshExpiresAt: at(600) }, 15),
      recorded('SessionRefreshed', { sessionId: s2, refreshedAt: at(25), refreshTokenHash: 'h4', refreshExpiresAt: at(600) }, 25),
      recorded('SessionUsed', { sessionId: s1, usedAt: at(30) }, 30),
      recorded('SessionUsed', { sessionId: s1, usedAt: at(18) }, 18),
      recorded('SessionRevoked', { sessionId: s2, userId: bob, reason: 'logout' }, 40),
      recorded('SessionUsed', { sessionId: s2, usedAt: at(45) }, 45),
    ],
  ],
  [
    // As the tuple streams allow: a tuple is written when absent, deleted when standing.
    fgaHistoryProjection,
    [
      recorded('FgaTupleWritten', tuple('d1', 'alice'), 1),
      recorded('FgaTupleWritten', tuple('d2', 'alice'), 2),
      recorded('FgaTupleWritten', tuple('d1', 'alice'), 3, 'other'),
      recorded('FgaTupleDeleted', tuple('d1', 'alice'), 4),
      recorded('FgaTupleDeleted', tuple('d2', 'alice'), 4),
      recorded('FgaTupleWritten', tuple('d1', 'alice'), 5),
      recorded('FgaTupleWritten', tuple('d3', 'bob'), 6),
      recorded('FgaTupleDeleted', tuple('d1', 'alice'), 7),
      recorded('FgaTupleWritten', tuple('d1', 'alice'), 7),
      ...tupleRequests(),
    ],
  ],
];

describe('batch handlers of the hot projections', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db.drop();
  });

  const contents = async (projection: Projection) => {
    const tables: Record<string, unknown[]> = {};
    for (const table of projection.tables) tables[table] = (await db.pool.query(`select * from ${table} order by 1, 2, 3, ${table}::text`)).rows;
    return tables;
  };
  const truncate = (projection: Projection) => db.pool.query(`truncate ${projection.tables.join(', ')}`);

  it.each(cases.map(([projection, events]) => [projection.name, projection, events] as const))(
    '%s: a whole batch gives the rows of applying its events one by one',
    async (_, projection, events) => {
      await truncate(projection);
      for (const event of events) await withTransaction(db.pool, (tx) => applyEvents(projection, [event], tx));
      const oneByOne = await contents(projection);
      await truncate(projection);
      await withTransaction(db.pool, (tx) => applyEvents(projection, events, tx));
      expect(await contents(projection)).toEqual(oneByOne);
      expect(Object.values(oneByOne).flat().length).toBeGreaterThan(0);
    },
  );

  it('keeps the effects a batch must not reorder', async () => {
    const [users, sessions, fgaHistory] = cases as [typeof cases[number], typeof cases[number], typeof cases[number]];
    await withTransaction(db.pool, (tx) => applyEvents(users[0], users[1], tx));
    const { rows: people } = await db.pool.query("select id, email, last_login_at from users where tenant_id = 'acme' order by email");
    // The first creation wins; the last login in log order stays, even when it is the earlier time.
    expect(people).toEqual([
      { id: alice, email: 'alice@acme.test', last_login_at: new Date(at(9)) },
      { id: bob, email: 'bob@acme.test', last_login_at: new Date(at(14)) },
    ]);
    await withTransaction(db.pool, (tx) => applyEvents(sessions[0], sessions[1], tx));
    const { rows: active } = await db.pool.query('select id, user_id, updated_at, idle_expires_at from sessions where id = $1', [s1]);
    expect(active).toEqual([{ id: s1, user_id: alice, updated_at: new Date(at(30)), idle_expires_at: new Date(at(60)) }]);
    // Lifetimes are closed by deletions: the history is applied once, onto no earlier rows.
    await truncate(fgaHistory[0]);
    await withTransaction(db.pool, (tx) => applyEvents(fgaHistory[0], fgaHistory[1], tx));
    // fga_tuples is the view of the open lifetimes (migration 0030).
    const { rows: tuples } = await db.pool.query("select object_id, created_at from fga_tuples where tenant_id = 'acme' order by object_id");
    // d1 is deleted and written again at one instant, d2 deleted, d3 deleted by a request and written
    // again, d4 written, deleted, written again, d5 written and deleted.
    expect(tuples).toEqual([
      { object_id: 'd1', created_at: new Date(at(7)) },
      { object_id: 'd3', created_at: new Date(at(10)) },
      { object_id: 'd4', created_at: new Date(at(10)) },
    ]);
  });

  it('audit: runs of events that keep no summary give the entries of applying them one by one', async () => {
    // audit_log is append-only and keyed by event id: the same history in two tenants, one applied
    // event by event and one as a batch, must give the same entries.
    const facts: [string, unknown][] = [
      ['FgaTupleWritten', tuple('d1', 'alice')],
      ['FgaTupleWritten', tuple('d2', 'alice')],
      ['UserCreated', user(newId(), 'dora@acme.test', [])],
      ['FgaTupleWritten', tuple('d3', 'bob')],
      ['FgaTupleDeleted', tuple('d1', 'alice')],
      ['LoginSucceeded', { userId: alice, sessionId: s1, method: 'password' }],
      ['FgaTupleDeleted', tuple('d2', 'alice')],
      ['FgaTuplesChanged', changed([['d4', 'alice'], ['d5', 'bob']], [['d3', 'bob']])],
      ['FgaTuplesChanged', changed([['d6', 'carol']])],
    ];
    const history = (tenant: string) => facts.map(([type, data], minute) => recorded(type, data, minute, tenant));
    for (const event of history('one-by-one')) await withTransaction(db.pool, (tx) => applyEvents(auditProjection, [event], tx));
    await withTransaction(db.pool, (tx) => applyEvents(auditProjection, history('batched'), tx));
    const entries = async (tenant: string) =>
      (await db.pool.query('select * from audit_log where tenant_id = $1 order by created_at', [tenant])).rows.map(({ id: _id, tenant_id: _tenant, ...rest }) => rest);
    const oneByOne = await entries('one-by-one');
    expect(oneByOne.map((entry) => entry.action)).toEqual(['FGA_TUPLE_WRITTEN', 'FGA_TUPLE_WRITTEN', 'USER_CREATED', 'FGA_TUPLE_WRITTEN', 'FGA_TUPLE_DELETED', 'LOGIN', 'FGA_TUPLE_DELETED', 'FGA_TUPLES_CHANGED', 'FGA_TUPLE_WRITTEN']);
    // A request of several tuples is one entry listing them; of one tuple, the entry a one-tuple event had.
    expect(oneByOne.slice(-2).map(({ resource_id, metadata }) => [resource_id, Object.keys(metadata).sort()])).toEqual([
      ['2 written, 1 deleted', ['deletes', 'modelId', 'writes']],
      ['document:d6#viewer@user:carol', ['modelId']],
    ]);
    expect(oneByOne.at(-2)!.metadata.writes).toEqual(['document:d4#viewer@user:alice', 'document:d5#viewer@user:bob']);
    expect(await entries('batched')).toEqual(oneByOne);
  });
});
