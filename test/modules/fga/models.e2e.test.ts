import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOCS } from './support/fga-fixture.ts';
import { startFgaService, type FgaTestService } from './support/fga-service.ts';

describe('authorization models over HTTP', () => {
  let t: FgaTestService;
  beforeAll(async () => {
    t = await startFgaService();
  });
  afterAll(() => t.close());

  it('runs the whole lifecycle: create, read, list, update, activate, delete, with every error code', async () => {
    const first = await t.call('POST', '/api/fga/models', { name: 'docs', dsl: DOCS });
    expect(first.status).toBe(201);
    expect(first.body.data).toEqual({
      id: expect.any(String),
      name: 'docs',
      version: 1,
      isActive: false,
      dsl: DOCS,
      schema: expect.objectContaining({ typeDefinitions: expect.any(Array) }),
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const document = first.body.data.schema.typeDefinitions.find((d: { type: string }) => d.type === 'document');
    expect(document.relations).toEqual({
      owner: { type: 'this' },
      viewer: { type: 'union', children: [{ type: 'this' }, { type: 'computedUserset', relation: 'owner' }] },
    });
    const second = (await t.call('POST', '/api/fga/models', { name: 'docs v2', dsl: `${DOCS}\n    define editor: [user]` })).body.data;
    expect(second.version).toBe(2);

    const list = await t.call('GET', '/api/fga/models');
    expect(list.body.data.map((m: { version: number }) => m.version)).toEqual([2, 1]);
    expect(Object.keys(list.body.data[0]).sort()).toEqual(['createdAt', 'id', 'isActive', 'name', 'updatedAt', 'version']);
    expect((await t.call('GET', '/api/fga/models?limit=1&page=2')).body.data.map((m: { id: string }) => m.id)).toEqual([first.body.data.id]);
    expect((await t.call('GET', `/api/fga/models/${first.body.data.id}`)).body.data).toEqual(first.body.data);

    const renamed = await t.call('PUT', `/api/fga/models/${first.body.data.id}`, { name: 'documents', dsl: `${DOCS}\n    define commenter: [user]` });
    expect(renamed.status).toBe(200);
    expect(renamed.body.data).toMatchObject({ name: 'documents', version: 1, dsl: expect.stringContaining('commenter') });

    const activated = await t.call('POST', `/api/fga/models/${first.body.data.id}/activate`);
    expect(activated.body).toEqual({ ok: true, data: { activated: true, modelId: first.body.data.id } });
    expect((await t.call('POST', `/api/fga/models/${first.body.data.id}/activate`)).body.error.code).toBe('ALREADY_ACTIVE');
    const isActive = async (id: string) => (await t.call('GET', `/api/fga/models/${id}`)).body.data.isActive;
    expect(await isActive(first.body.data.id)).toBe(true);

    const refused = await t.call('DELETE', `/api/fga/models/${first.body.data.id}`);
    expect([refused.status, refused.body.error.code]).toEqual([400, 'MODEL_IS_ACTIVE']);

    // Activating another model deactivates the first, which can then go.
    await t.call('POST', `/api/fga/models/${second.id}/activate`);
    expect([await isActive(first.body.data.id), await isActive(second.id)]).toEqual([false, true]);
    expect((await t.call('DELETE', `/api/fga/models/${first.body.data.id}`)).body).toEqual({ ok: true, data: { deleted: true } });
    for (const [method, suffix] of [['GET', ''], ['PUT', ''], ['DELETE', ''], ['POST', '/activate']] as const) {
      const gone = await t.call(method, `/api/fga/models/${first.body.data.id}${suffix}`, method === 'PUT' ? { name: 'x' } : undefined);
      expect([gone.status, gone.body.error.code]).toEqual([404, 'NOT_FOUND']);
    }
    // Versions are never reused.
    expect((await t.call('POST', '/api/fga/models', { name: 'third', dsl: DOCS })).body.data.version).toBe(3);
  });

  it('keeps the DSL in the events, not only the compiled form', async () => {
    const created = (await t.call('POST', '/api/fga/models', { name: 'evented', dsl: DOCS })).body.data;
    const { rows } = await t.db.pool.query("select stream_id, data from events where type = 'FgaModelCreated' and data->>'modelId' = $1", [created.id]);
    expect(rows[0].stream_id).toBe('fgamodels-acme');
    expect(rows[0].data.dsl).toBe(DOCS);
    expect(rows[0].data.schema).toEqual(created.schema);
  });

  it('reports DSL errors with their codes (parse errors with the line), validated on update too', async () => {
    const parse = await t.call('POST', '/api/fga/models', { name: 'bad', dsl: 'type user\ntype doc\n  relations\n    define viewer [user]' });
    expect([parse.status, parse.body.error.code]).toEqual([400, 'DSL_PARSE_ERROR']);
    expect(parse.body.error.message).toMatch(/line 4/);
    const undefinedType = await t.call('POST', '/api/fga/models', { name: 'bad', dsl: 'type doc\n  relations\n    define viewer: [user]' });
    expect([undefinedType.status, undefinedType.body.error.code]).toEqual([400, 'DSL_VALIDATION_ERROR']);
    const cycle = await t.call('POST', '/api/fga/models', { name: 'bad', dsl: 'type user\ntype doc\n  relations\n    define a: [user] or b\n    define b: a' });
    expect(cycle.body.error.code).toBe('DSL_VALIDATION_ERROR');
    const unsupported = await t.call('POST', '/api/fga/models', { name: 'bad', dsl: 'type user\ncondition x(a: int) {\n  a < 1\n}' });
    expect(unsupported.body.error.code).toBe('DSL_PARSE_ERROR');

    const model = (await t.call('POST', '/api/fga/models', { name: 'fine', dsl: DOCS })).body.data;
    const badUpdate = await t.call('PUT', `/api/fga/models/${model.id}`, { dsl: 'type doc\n  relations\n    define viewer: [nobody]' });
    expect(badUpdate.body.error.code).toBe('DSL_VALIDATION_ERROR');
    expect((await t.call('GET', `/api/fga/models/${model.id}`)).body.data.dsl).toBe(DOCS);
    for (const body of [{}, { name: 'x' }, { dsl: DOCS }, { name: '', dsl: DOCS }, { name: 'x', dsl: DOCS, extra: 1 }]) {
      expect((await t.call('POST', '/api/fga/models', body)).body.error.code).toBe('VALIDATION_ERROR');
    }
    expect((await t.call('PUT', `/api/fga/models/${model.id}`, {})).body.error.code).toBe('VALIDATION_ERROR');
  });

  it('answers hostile input with errors, never a hang or a 500', async () => {
    const malformed = await t.request({
      method: 'POST',
      url: '/api/fga/models',
      tenant: 'acme',
      token: await t.token({ sub: 'a', tenant: 'acme', roles: ['admin'] }),
      body: '{"name": "x", "dsl": ',
      headers: { 'content-type': 'application/json' },
    });
    expect([malformed.status, malformed.body.error.code]).toEqual([400, 'VALIDATION_ERROR']);

    const lines = ['type user', 'type doc', '  relations', ...Array.from({ length: 10_000 }, (_, i) => `    define r${i}: [user]`)];
    const started = Date.now();
    const big = await t.call('POST', '/api/fga/models', { name: 'big', dsl: lines.join('\n') });
    expect(big.status).toBe(201);
    expect(Object.keys(big.body.data.schema.typeDefinitions[1].relations)).toHaveLength(10_000);
    expect(Date.now() - started).toBeLessThan(30_000);

    const deep = `type user\ntype doc\n  relations\n    define viewer: ${'('.repeat(5000)}[user]${')'.repeat(5000)}`;
    const nested = await t.call('POST', '/api/fga/models', { name: 'deep', dsl: deep });
    expect([nested.status, nested.body.error.code]).toEqual([400, 'DSL_PARSE_ERROR']);
    const chain = ['type user', 'type doc', '  relations', '    define r0: [user]', ...Array.from({ length: 2000 }, (_, i) => `    define r${i + 1}: r${i}`)];
    const chained = await t.call('POST', '/api/fga/models', { name: 'chain', dsl: chain.join('\n') });
    expect(chained.status).toBe(201);
    await t.call('POST', `/api/fga/models/${chained.body.data.id}/activate`);
    const check = (relation: string) => t.call('POST', '/api/fga/check', { objectType: 'doc', objectId: 'd', relation, subjectType: 'user', subjectId: 'u', explain: true });
    expect((await check('r10')).body.data.allowed).toBe(false);
    const tooDeep = await check('r2000');
    expect([tooDeep.status, tooDeep.body.error.code]).toEqual([400, 'MAX_DEPTH_EXCEEDED']);
  });

  it('checks the permissions of the spec', async () => {
    const noRights = { roles: ['user'] };
    expect((await t.call('GET', '/api/fga/models', undefined, noRights)).status).toBe(403);
    expect((await t.call('POST', '/api/fga/models', { name: 'x', dsl: DOCS }, noRights)).status).toBe(403);
    expect((await t.request({ method: 'GET', url: '/api/fga/models', tenant: 'acme' })).status).toBe(401);
  });

  it('isolates tenants: another tenant\'s model is 404 everywhere and never listed', async () => {
    const theirs = (await t.call('POST', '/api/fga/models', { name: 'acme only', dsl: DOCS })).body.data;
    const beta = { tenant: 'beta' };
    expect((await t.call('GET', '/api/fga/models', undefined, beta)).body.data).toEqual([]);
    for (const [method, suffix, body] of [
      ['GET', '', undefined],
      ['PUT', '', { name: 'stolen' }],
      ['DELETE', '', undefined],
      ['POST', '/activate', undefined],
    ] as const) {
      const attempt = await t.call(method, `/api/fga/models/${theirs.id}${suffix}`, body, beta);
      expect([attempt.status, attempt.body.error.code]).toEqual([404, 'NOT_FOUND']);
    }
    expect((await t.call('GET', `/api/fga/models/${theirs.id}`)).body.data).toMatchObject({ name: 'acme only', isActive: false });
    // Version numbers are per tenant.
    expect((await t.call('POST', '/api/fga/models', { name: 'beta first', dsl: DOCS }, beta)).body.data.version).toBe(1);
  });
});
