import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fgaHistoryProjection } from '../../../projections/fga-history.ts';
import { rebuildProjection } from '../../../src/platform/projections/rebuild.ts';
import { startFgaService, type FgaTestService } from './support/fga-service.ts';

const MODEL = `model
  schema 1.1
type user
type group
  relations
    define member: [user, group#member]
type document
  relations
    define owner: [user]
    define viewer: [user, user:*, group#member] or owner`;

const tuple = (objectId: string, relation: string, subjectId: string, extra: Record<string, string> = {}) => ({
  objectType: 'document',
  objectId,
  relation,
  subjectType: 'user',
  subjectId,
  ...extra,
});

describe('relation tuples over HTTP', () => {
  let t: FgaTestService;
  beforeAll(async () => {
    t = await startFgaService();
  });
  afterAll(() => t.close());

  it('refuses writes while the tenant has no active model', async () => {
    const refused = await t.call('POST', '/api/fga/tuples', tuple('d0', 'viewer', 'anne'));
    expect([refused.status, refused.body.error.code]).toEqual([400, 'NO_ACTIVE_MODEL']);
    await t.activeModel(MODEL);
  });

  it('writes (201 with a consistency token), lists, and deletes idempotently', async () => {
    const written = await t.call('POST', '/api/fga/tuples', tuple('d1', 'viewer', 'anne'));
    expect(written.status).toBe(201);
    expect(written.body).toEqual({ ok: true, data: { ...tuple('d1', 'viewer', 'anne'), consistencyToken: expect.stringMatching(/^\d+$/) } });
    const userset = { objectType: 'document', objectId: 'd1', relation: 'viewer', subjectType: 'group', subjectId: 'eng', subjectRelation: 'member' };
    expect((await t.call('POST', '/api/fga/tuples', userset)).status).toBe(201);
    expect((await t.call('POST', '/api/fga/tuples', tuple('d2', 'viewer', '*'))).status).toBe(201);

    const list = await t.call('GET', '/api/fga/tuples?objectId=d1');
    expect(list.body.data.pagination).toEqual({ page: 1, limit: 20, total: 2, totalPages: 1 });
    expect(list.body.data.data).toEqual([
      { ...userset, createdAt: expect.any(String) },
      { ...tuple('d1', 'viewer', 'anne'), createdAt: expect.any(String) },
    ]);

    const deleted = await t.call('DELETE', '/api/fga/tuples', tuple('d1', 'viewer', 'anne'));
    expect(deleted.body).toEqual({ ok: true, data: { deleted: true, consistencyToken: expect.stringMatching(/^\d+$/) } });
    const again = await t.call('DELETE', '/api/fga/tuples', tuple('d1', 'viewer', 'anne'));
    expect(again.body.data).toEqual({ deleted: true, consistencyToken: deleted.body.data.consistencyToken });
    expect((await t.call('DELETE', '/api/fga/tuples', tuple('never', 'viewer', 'anne'))).body.data.deleted).toBe(true);
    expect((await t.call('GET', '/api/fga/tuples?objectId=d1')).body.data.data).toEqual([{ ...userset, createdAt: expect.any(String) }]);
    // Written again after a delete: a new fact, not a conflict.
    expect((await t.call('POST', '/api/fga/tuples', tuple('d1', 'viewer', 'anne'))).status).toBe(201);
  });

  it('validates tuples against the active model', async () => {
    const cases: [Record<string, string>, string][] = [
      [{ ...tuple('d1', 'viewer', 'bob'), objectType: 'folder' }, 'INVALID_TYPE'],
      [tuple('d1', 'editor', 'bob'), 'INVALID_RELATION'],
      [{ ...tuple('d1', 'viewer', 'bob'), subjectType: 'robot' }, 'INVALID_SUBJECT_TYPE'],
      [tuple('d1', 'owner', '*'), 'INVALID_SUBJECT_TYPE'],
      [{ ...tuple('d1', 'viewer', 'eng'), subjectType: 'group' }, 'INVALID_SUBJECT_TYPE'],
      [tuple('d1', 'viewer', 'x', { subjectRelation: 'member' }), 'INVALID_SUBJECT_TYPE'],
    ];
    for (const [body, code] of cases) {
      const refused = await t.call('POST', '/api/fga/tuples', body);
      expect([refused.status, refused.body.error.code], JSON.stringify(body)).toEqual([400, code]);
    }
    const invalid = [{ ...tuple('d1', 'viewer', 'bob'), objectId: 'a b' }, { ...tuple('d1', 'viewer', 'bob'), objectId: '*' }, { objectType: 'document' }, { ...tuple('d1', 'viewer', 'bob'), extra: 'x' }];
    for (const body of invalid) expect((await t.call('POST', '/api/fga/tuples', body)).body.error.code).toBe('VALIDATION_ERROR');
    await t.call('POST', '/api/fga/tuples', tuple('dup', 'viewer', 'carl'));
    const duplicate = await t.call('POST', '/api/fga/tuples', tuple('dup', 'viewer', 'carl'));
    expect([duplicate.status, duplicate.body.error.code]).toEqual([409, 'TUPLE_EXISTS']);
  });

  it('lets exactly one of concurrent writes of the same tuple win', async () => {
    const race = await Promise.all([1, 2, 3, 4].map(() => t.call('POST', '/api/fga/tuples', tuple('raced', 'viewer', 'dora'))));
    expect(race.map((r) => r.status).sort()).toEqual([201, 409, 409, 409]);
    const { rows } = await t.db.pool.query(
      `select count(*)::int as n from events where stream_id = 'fgatuples-acme' and data->'writes' @> '[{"objectId": "raced", "subjectId": "dora"}]'`,
    );
    expect(rows[0].n).toBe(1);
  });

  it('applies a bulk request atomically: one bad item applies nothing', async () => {
    const applied = await t.call('POST', '/api/fga/tuples/bulk', {
      writes: [tuple('b1', 'viewer', 'erin'), tuple('b2', 'owner', 'erin')],
      deletes: [tuple('dup', 'viewer', 'carl'), tuple('absent', 'viewer', 'carl')],
    });
    expect(applied.body).toEqual({ ok: true, data: { written: 2, deleted: 1, consistencyToken: expect.stringMatching(/^\d+$/) } });
    const erin = async () => (await t.call('GET', '/api/fga/tuples?subjectType=user&subjectId=erin')).body.data.pagination.total;
    expect(await erin()).toBe(2);

    const before = (await t.db.pool.query('select count(*)::int as n from events')).rows[0].n;
    for (const [batch, code] of [
      [{ writes: [tuple('b3', 'viewer', 'erin'), tuple('b3', 'nope', 'erin')], deletes: [tuple('b1', 'viewer', 'erin')] }, 'INVALID_RELATION'],
      [{ writes: [tuple('b4', 'viewer', 'erin'), tuple('b1', 'viewer', 'erin')] }, 'TUPLE_EXISTS'],
      [{ writes: [tuple('b5', 'viewer', 'erin')], deletes: [tuple('b5', 'viewer', 'erin')] }, 'VALIDATION_ERROR'],
      [{ writes: Array.from({ length: 101 }, (_, i) => tuple(`many${i}`, 'viewer', 'erin')) }, 'VALIDATION_ERROR'],
      [{}, 'VALIDATION_ERROR'],
      [{ writes: [], deletes: [] }, 'VALIDATION_ERROR'],
    ] as const) {
      expect((await t.call('POST', '/api/fga/tuples/bulk', batch)).body.error.code).toBe(code);
    }
    expect((await t.db.pool.query('select count(*)::int as n from events')).rows[0].n).toBe(before);
    expect(await erin()).toBe(2);

    const full = await t.call('POST', '/api/fga/tuples/bulk', {
      writes: Array.from({ length: 100 }, (_, i) => tuple(`full${i}`, 'viewer', 'fay')),
      deletes: Array.from({ length: 100 }, (_, i) => tuple(`none${i}`, 'viewer', 'fay')),
    });
    expect(full.body.data).toMatchObject({ written: 100, deleted: 0 });
  });

  it('lists with filters and stable pages', async () => {
    const all = (await t.call('GET', '/api/fga/tuples?subjectId=fay&limit=100')).body.data;
    expect(all.pagination).toEqual({ page: 1, limit: 100, total: 100, totalPages: 1 });
    const pages = [];
    for (let page = 1; page <= 4; page += 1) pages.push(...(await t.call('GET', `/api/fga/tuples?subjectId=fay&limit=30&page=${page}`)).body.data.data);
    expect(pages).toEqual(all.data);
    expect((await t.call('GET', '/api/fga/tuples?objectType=document&relation=owner')).body.data.data.map((x: { objectId: string }) => x.objectId)).toEqual(['b2']);
    expect((await t.call('GET', '/api/fga/tuples?limit=101')).body.error.code).toBe('VALIDATION_ERROR');
  });

  it('checks the permissions of the spec', async () => {
    const noRights = { roles: ['user'] };
    expect((await t.call('GET', '/api/fga/tuples', undefined, noRights)).status).toBe(403);
    expect((await t.call('POST', '/api/fga/tuples', tuple('p', 'viewer', 'x'), noRights)).status).toBe(403);
    expect((await t.call('DELETE', '/api/fga/tuples', tuple('p', 'viewer', 'x'), noRights)).status).toBe(403);
    expect((await t.call('POST', '/api/fga/tuples/bulk', { writes: [tuple('p', 'viewer', 'x')] }, noRights)).status).toBe(403);
  });

  it('isolates tenants: beta sees none of acme\'s tuples and writes its own', async () => {
    const beta = { tenant: 'beta' };
    expect((await t.call('GET', '/api/fga/tuples', undefined, beta)).body.data).toEqual({ data: [], pagination: { page: 1, limit: 20, total: 0, totalPages: 0 } });
    expect((await t.call('POST', '/api/fga/tuples', tuple('d1', 'viewer', 'anne'), beta)).body.error.code).toBe('NO_ACTIVE_MODEL');
    // Deleting in beta a tuple that exists in acme changes nothing in acme.
    await t.call('DELETE', '/api/fga/tuples', tuple('d1', 'viewer', 'anne'), beta);
    expect((await t.call('GET', '/api/fga/tuples?objectId=d1&subjectId=anne')).body.data.pagination.total).toBe(1);
    await t.activeModel(MODEL, 'beta');
    expect((await t.call('POST', '/api/fga/tuples', tuple('d1', 'viewer', 'anne'), beta)).status).toBe(201);
    expect((await t.call('GET', '/api/fga/tuples', undefined, beta)).body.data.pagination.total).toBe(1);
  });

  it('orders a list by object, relation, subject type, subject relation, then subject id', async () => {
    // After the isolation test: beta holds no other tuple.
    const beta = { tenant: 'beta' };
    await t.activeModel('model\n  schema 1.1\ntype user\ntype group\n  relations\n    define member: [user]\ntype document\n  relations\n    define viewer: [group, group#member, user]', 'beta');
    const subjects = [{ subjectType: 'group', subjectId: 'b' }, { subjectType: 'group', subjectId: 'a', subjectRelation: 'member' }, { subjectType: 'user', subjectId: 'zed' }, { subjectType: 'group', subjectId: 'c', subjectRelation: 'member' }];
    await t.call('POST', '/api/fga/tuples/bulk', { writes: subjects.map((subject) => ({ ...tuple('ordered', 'viewer', ''), ...subject })) }, beta);
    const listed = (await t.call('GET', '/api/fga/tuples?objectId=ordered', undefined, beta)).body.data.data;
    expect(listed.map((x: { subjectType: string; subjectId: string; subjectRelation?: string }) => `${x.subjectType}:${x.subjectId}${x.subjectRelation ? `#${x.subjectRelation}` : ''}`)).toEqual([
      'group:b',
      'group:a#member',
      'group:c#member',
      'user:zed',
    ]);
  });

  it('rebuilding the projection yields the same tuples (fga_tuples: the open lifetimes of the history)', async () => {
    const snapshot = () => t.db.pool.query('select * from fga_tuples order by tenant_id, object_type, object_id, relation, subject_type, subject_id, subject_relation');
    const before = (await snapshot()).rows;
    expect(before.length).toBeGreaterThan(100);
    await rebuildProjection(fgaHistoryProjection, t.events, t.db.pool, pino({ level: 'silent' }));
    expect((await snapshot()).rows).toEqual(before);
  });
});
