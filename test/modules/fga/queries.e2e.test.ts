import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MODEL, NEXT_MODEL } from './support/documents-model.ts';
import { startFgaService, type FgaTestService } from './support/fga-service.ts';

const userCheck = (objectId: string, relation: string, subjectId: string, extra: Record<string, unknown> = {}) => ({
  objectType: 'document',
  objectId,
  relation,
  subjectType: 'user',
  subjectId,
  ...extra,
});

describe('check, expand and list-objects over HTTP', () => {
  let t: FgaTestService;
  const TIMEOUT_MS = 1500;
  const check = async (body: Record<string, unknown>, options?: { tenant?: string }, service = t) => service.call('POST', '/api/fga/check', body, options);
  const allowed = async (body: Record<string, unknown>, service = t) => {
    const answer = await check(body, undefined, service);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    return answer.body.data.allowed as boolean;
  };

  beforeAll(async () => {
    t = await startFgaService({ env: { READ_YOUR_WRITES_TIMEOUT_MS: String(TIMEOUT_MS) } });
    const none = await check(userCheck('d1', 'viewer', 'anne'));
    expect([none.status, none.body.error.code]).toEqual([400, 'NO_ACTIVE_MODEL']);
    await t.activeModel(MODEL);
    const tuples = [
      'group:eng#member@user:anne',
      'group:all#member@group:eng#member',
      'folder:shared#viewer@group:all#member',
      'document:spec#parent@folder:shared',
      'document:spec#owner@user:olga',
      'document:public#viewer@user:*',
      'document:secret#viewer@user:anne',
      'document:secret#viewer@user:bert',
      'document:secret#blocked@user:bert',
      'group:loop1#member@group:loop2#member',
      'group:loop2#member@group:loop1#member',
    ].map((text) => {
      const [object, subject] = text.split('@') as [string, string];
      const [objectRef, relation] = object.split('#') as [string, string];
      const [objectType, objectId] = objectRef.split(':') as [string, string];
      const [subjectRef, subjectRelation] = subject.split('#');
      const [subjectType, subjectId] = subjectRef!.split(':') as [string, string];
      return { objectType, objectId, relation, subjectType, subjectId, ...(subjectRelation ? { subjectRelation } : {}) };
    });
    expect((await t.call('POST', '/api/fga/tuples/bulk', { writes: tuples })).status).toBe(200);
  });
  afterAll(() => t.close());

  it('answers direct, userset, tuple-to-userset, computed, wildcard and exclusion checks', async () => {
    expect(await allowed(userCheck('spec', 'viewer', 'anne'))).toBe(true); // group in group, via the parent folder
    expect(await allowed(userCheck('spec', 'viewer', 'olga'))).toBe(true); // owner
    expect(await allowed(userCheck('spec', 'viewer', 'zed'))).toBe(false);
    expect(await allowed(userCheck('public', 'viewer', 'anyone'))).toBe(true); // user:*
    expect(await allowed(userCheck('secret', 'can_read', 'anne'))).toBe(true);
    expect(await allowed(userCheck('secret', 'can_read', 'bert'))).toBe(false); // viewer but blocked
    expect(await allowed(userCheck('unknown-document', 'viewer', 'anne'))).toBe(false);
    // A userset as the subject, and a membership cycle that ends in "no" instead of looping.
    expect(await allowed({ objectType: 'folder', objectId: 'shared', relation: 'viewer', subjectType: 'group', subjectId: 'eng', subjectRelation: 'member' })).toBe(true);
    expect(await allowed({ objectType: 'group', objectId: 'loop1', relation: 'member', subjectType: 'user', subjectId: 'anne' })).toBe(false);
  });

  it('explains a check with its resolution tree', async () => {
    const answer = await check(userCheck('secret', 'viewer', 'anne', { explain: true }));
    expect(answer.body.data.allowed).toBe(true);
    const root = answer.body.data.resolution;
    expect(root).toMatchObject({ type: 'union', relation: 'viewer', result: true });
    expect(root.children[0]).toMatchObject({ type: 'this', relation: 'viewer', result: true, tupleFound: 'document:secret#viewer@user:anne' });
    expect((await check(userCheck('secret', 'viewer', 'anne'))).body.data).toEqual({ allowed: true });
  });

  it('rejects what the model does not define, and recursion past depth 25', async () => {
    const codes = async (body: Record<string, unknown>) => {
      const answer = await check(body);
      return [answer.status, answer.body.error?.code];
    };
    expect(await codes({ ...userCheck('d', 'viewer', 'anne'), objectType: 'folderx' })).toEqual([400, 'INVALID_TYPE']);
    expect(await codes(userCheck('d', 'approver', 'anne'))).toEqual([400, 'INVALID_RELATION']);
    expect(await codes({ ...userCheck('d', 'viewer', 'anne'), subjectType: 'robot' })).toEqual([400, 'INVALID_TYPE']);
    expect(await codes({ objectType: 'document', objectId: 'd' })).toEqual([400, 'VALIDATION_ERROR']);
    expect(await codes({ ...userCheck('d', 'viewer', 'anne'), explain: 'yes' })).toEqual([400, 'VALIDATION_ERROR']);

    const chain = Array.from({ length: 30 }, (_, i) => ({
      objectType: 'group', objectId: `level${i + 1}`, relation: 'member', subjectType: 'group', subjectId: `level${i}`, subjectRelation: 'member',
    }));
    await t.call('POST', '/api/fga/tuples/bulk', { writes: [{ objectType: 'group', objectId: 'level0', relation: 'member', subjectType: 'user', subjectId: 'deep' }, ...chain] });
    expect(await codes({ objectType: 'group', objectId: 'level30', relation: 'member', subjectType: 'user', subjectId: 'deep' })).toEqual([400, 'MAX_DEPTH_EXCEEDED']);
    expect(await allowed({ objectType: 'group', objectId: 'level10', relation: 'member', subjectType: 'user', subjectId: 'deep' })).toBe(true);
  });

  it('expands a relation one rewrite level deep', async () => {
    const answer = await t.call('POST', '/api/fga/expand', { objectType: 'document', objectId: 'secret', relation: 'viewer' });
    expect(answer.body).toEqual({
      ok: true,
      data: {
        tree: {
          type: 'union',
          relation: 'viewer',
          object: 'document:secret',
          children: [
            { type: 'this', relation: 'viewer', object: 'document:secret', users: ['user:anne', 'user:bert'] },
            { type: 'computedUserset', relation: 'owner', object: 'document:secret' },
            { type: 'tupleToUserset', relation: 'parent', object: 'document:secret', users: [] },
          ],
        },
      },
    });
    const spec = await t.call('POST', '/api/fga/expand', { objectType: 'document', objectId: 'spec', relation: 'viewer' });
    expect(spec.body.data.tree.children[2].users).toEqual(['folder:shared#viewer']);
  });

  it('lists objects as bare ids with their count', async () => {
    const list = await t.call('POST', '/api/fga/list-objects', { objectType: 'document', relation: 'viewer', subjectType: 'user', subjectId: 'anne' });
    expect(list.body).toEqual({ ok: true, data: { objectIds: ['public', 'secret', 'spec'], total: 3 } });
    const readable = await t.call('POST', '/api/fga/list-objects', { objectType: 'document', relation: 'can_read', subjectType: 'user', subjectId: 'bert' });
    expect(readable.body.data).toEqual({ objectIds: ['public'], total: 1 });
  });

  it('writes the JSON list-objects answer as the envelope would be serialized, byte for byte', async () => {
    const token = await t.token({ sub: 'acme-caller', tenant: 'acme', roles: ['admin'] });
    const text = async (subjectId: string) => {
      const payload = { objectType: 'document', relation: 'viewer', subjectType: 'user', subjectId };
      const response = await t.service.app.inject({ method: 'POST', url: '/api/fga/list-objects', headers: { 'x-tenant': 'acme', authorization: `Bearer ${token}` }, payload });
      expect(response.headers['content-type']).toMatch(/^application\/json/);
      return response.body;
    };
    expect(await text('anne')).toBe(JSON.stringify({ ok: true, data: { objectIds: ['public', 'secret', 'spec'], total: 3 } }));
    // user:* sees the public document.
    expect(await text('nobody')).toBe('{"ok":true,"data":{"objectIds":["public"],"total":1}}');
  });

  it('streams list-objects as NDJSON lines, one sorted id each, when the client accepts them', async () => {
    const body = { objectType: 'document', relation: 'viewer', subjectType: 'user', subjectId: 'anne' };
    const token = await t.token({ sub: 'acme-caller', tenant: 'acme', roles: ['admin'] });
    const streamed = await t.request({ method: 'POST', url: '/api/fga/list-objects', tenant: 'acme', token, body, headers: { accept: 'application/x-ndjson' } });
    expect(streamed.status).toBe(200);
    expect(streamed.headers['content-type']).toMatch(/^application\/x-ndjson/);
    const lines = (streamed.body as string).split('\n');
    expect(lines.pop()).toBe('');
    expect(lines.map((line) => JSON.parse(line))).toEqual([{ objectId: 'public' }, { objectId: 'secret' }, { objectId: 'spec' }]);
    // Errors keep their JSON envelope.
    const unknown = await t.request({ method: 'POST', url: '/api/fga/list-objects', tenant: 'acme', token, body: { ...body, objectType: 'nothing' }, headers: { accept: 'application/x-ndjson' } });
    expect([unknown.status, unknown.body.error.code]).toEqual([400, 'INVALID_TYPE']);
  });

  it('documents the consistency token in the OpenAPI document', async () => {
    const { body } = await t.request({ method: 'GET', url: '/api/openapi.json' });
    for (const path of ['/api/fga/check', '/api/fga/expand', '/api/fga/list-objects']) {
      const schema = body.paths[path].post.requestBody.content['application/json'].schema;
      expect(schema.properties.consistencyToken.description).toMatch(/tuple write/);
    }
    expect(body.paths['/api/fga/tuples'].post.summary).toMatch(/consistencyToken/);
  });

  it('requires debug:fga', async () => {
    for (const url of ['/api/fga/check', '/api/fga/expand', '/api/fga/list-objects']) {
      expect((await t.call('POST', url, userCheck('d', 'viewer', 'anne'), { roles: ['user'] })).status).toBe(403);
    }
  });

  it('isolates tenants: beta answers from its own model and tuples only', async () => {
    const beta = { tenant: 'beta' };
    expect((await check(userCheck('secret', 'viewer', 'anne'), beta)).body.error.code).toBe('NO_ACTIVE_MODEL');
    await t.activeModel(MODEL, 'beta');
    expect((await check(userCheck('secret', 'viewer', 'anne'), beta)).body.data).toEqual({ allowed: false });
    const list = await t.call('POST', '/api/fga/list-objects', { objectType: 'document', relation: 'viewer', subjectType: 'user', subjectId: 'anne' }, beta);
    expect(list.body.data).toEqual({ objectIds: [], total: 0 });
    const expand = await t.call('POST', '/api/fga/expand', { objectType: 'document', objectId: 'secret', relation: 'viewer' }, beta);
    expect(expand.body.data.tree.children[0].users).toEqual([]);
  });

  describe('with a second service instance on the same database', () => {
    let other: FgaTestService;
    beforeAll(async () => {
      other = await startFgaService({ db: t.db, env: { READ_YOUR_WRITES_TIMEOUT_MS: String(TIMEOUT_MS) } });
    });
    afterAll(() => other.close());

    it('a consistency token makes the other instance wait for the write it names', async () => {
      expect(await allowed(userCheck('held', 'viewer', 'anne'), other)).toBe(false);
      // The other instance stops following the log: the write is committed, but it has not applied it.
      const otherIndexes = other.service.fga.indexes;
      await otherIndexes.stop();
      const written = await t.call('POST', '/api/fga/tuples', userCheck('held', 'viewer', 'anne'));
      expect(written.status).toBe(201);
      expect(await allowed(userCheck('held', 'viewer', 'anne'), other)).toBe(false);
      const waiting = check(userCheck('held', 'viewer', 'anne', { consistencyToken: written.body.data.consistencyToken }), undefined, other);
      await new Promise((resolve) => setTimeout(resolve, 300));
      await otherIndexes.start();
      expect((await waiting).body.data).toEqual({ allowed: true });

      const deleted = await t.call('DELETE', '/api/fga/tuples', userCheck('held', 'viewer', 'anne'));
      const list = await other.call('POST', '/api/fga/list-objects', {
        objectType: 'document', relation: 'viewer', subjectType: 'user', subjectId: 'anne', consistencyToken: deleted.body.data.consistencyToken,
      });
      expect(list.body.data.objectIds).not.toContain('held');
    });

    it('a written token the index has not reached in time is 503 CONSISTENCY_TIMEOUT, not a possibly stale answer', async () => {
      const otherIndexes = other.service.fga.indexes;
      await otherIndexes.stop();
      try {
        const written = await t.call('POST', '/api/fga/tuples', userCheck('late', 'viewer', 'anne'));
        const late = await check(userCheck('late', 'viewer', 'anne', { consistencyToken: written.body.data.consistencyToken }), undefined, other);
        expect([late.status, late.body.error.code, late.headers['retry-after']]).toEqual([503, 'CONSISTENCY_TIMEOUT', '1']);
      } finally {
        await otherIndexes.start();
      }
    });

    it('a token no write answered with is 400 VALIDATION_ERROR at once, never a wait', async () => {
      const last = await t.store.lastWrittenPosition();
      const neverIssued = await check(userCheck('secret', 'viewer', 'anne', { consistencyToken: String(last + (1n << 40n)) }), undefined, other);
      expect([neverIssued.status, neverIssued.body.error.code, neverIssued.body.error.details]).toEqual([
        400, 'VALIDATION_ERROR', [{ path: 'body.consistencyToken', message: 'no write answered with this consistency token' }],
      ]);
      expect((await check(userCheck('secret', 'viewer', 'anne', { consistencyToken: 'soon' }))).body.error.code).toBe('VALIDATION_ERROR');
    });

    it('drops the cached model when the log shows another one activated, well before the 5-minute expiry', async () => {
      expect(await allowed(userCheck('public', 'viewer', 'anyone'), other)).toBe(true);
      const next = (await t.call('POST', '/api/fga/models', { name: 'next', dsl: NEXT_MODEL })).body.data;
      expect((await check(userCheck('public', 'editor', 'anyone'), undefined, other)).body.error.code).toBe('INVALID_RELATION');
      await t.call('POST', `/api/fga/models/${next.id}/activate`);
      const activation = String(await t.store.lastWrittenPosition());
      // The wildcard tuple stays stored but the active model no longer allows it: ignored.
      expect(await allowed(userCheck('public', 'viewer', 'anyone', { consistencyToken: activation }), other)).toBe(false);
      expect(await allowed(userCheck('public', 'editor', 'anyone', { consistencyToken: activation }), other)).toBe(false);
      expect((await t.call('GET', '/api/fga/tuples?objectId=public')).body.data.data).toHaveLength(1);
    });
  });
});
