import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { v7 } from 'uuid';
import { auditProjection } from '../../../projections/audit.ts';
import { rebuildProjection } from '../../../src/platform/projections/rebuild.ts';
import { PLATFORM, startTestService, type TestService } from '../../support/service.ts';

const ROOT = { email: 'root@platform.test', password: 'Sup3rSecret!' };
const UA = 'audit-test/1.0';

describe('audit log: projected entries, GET /api/logs/audit, append-only table', () => {
  let t: TestService;
  const admins: Record<string, { token: string; id: string }> = {};

  const login = (tenant: string, email: string, password: string, remoteAddress = '203.0.113.7') =>
    t.request({ method: 'POST', url: '/api/auth/login', tenant, body: { email, password }, headers: { 'user-agent': UA }, remoteAddress });
  const call = (method: string, url: string, tenant = 'acme', body?: unknown, token = admins[tenant]!.token) =>
    t.request({ method, url, body, token, tenant, headers: { 'user-agent': UA }, remoteAddress: '203.0.113.7' });
  const auditCaughtUp = async () => expect(await t.service.runner.waitFor(await t.store.lastWrittenPosition(), 10_000, ['audit'])).toBe(true);
  const subjectOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).sub as string;
  const entries = async (tenant: string, query = '') => {
    const response = await call('GET', `/api/logs/audit?limit=500${query}`, tenant);
    expect(response.status).toBe(200);
    return response.body.data as Record<string, any>[];
  };
  /** Rows straight into the table (the trigger allows INSERT): controlled times for the filter tests. */
  const insertRows = async (tenant: string, rows: { action: string; at: string; userId?: string }[]) => {
    for (const row of rows) {
      await t.db.pool.query('insert into audit_log (tenant_id, id, action, user_id, status, created_at) values ($1, $2, $3, $4, $5, $6)', [
        tenant,
        v7(),
        row.action,
        row.userId ?? null,
        'success',
        row.at,
      ]);
    }
  };

  beforeAll(async () => {
    t = await startTestService({ env: { IAM_BOOTSTRAP_ADMIN_EMAIL: ROOT.email, IAM_BOOTSTRAP_ADMIN_PASSWORD: ROOT.password } });
    const root = (await login(PLATFORM, ROOT.email, ROOT.password)).body.data.accessToken;
    for (const name of ['acme', 'globex', 'initech']) {
      const created = await t.request({
        method: 'POST',
        url: '/api/tenants',
        tenant: PLATFORM,
        token: root,
        body: { name, adminEmail: `admin@${name}.test`, adminPassword: 'Adm1n-Pass' },
      });
      expect(created.status).toBe(201);
      const token = (await login(name, `admin@${name}.test`, 'Adm1n-Pass')).body.data.accessToken;
      admins[name] = { token, id: subjectOf(token) };
    }
  });
  afterAll(() => t.close());

  it('records user mutations with the actor, before/after summaries, client address and user agent', async () => {
    const created = await call('POST', '/api/users', 'acme', { email: 'jane@acme.test', firstName: 'Jane', password: 'Str0ngPass!' });
    const janeId = created.body.data.id;
    await call('PUT', `/api/users/${janeId}`, 'acme', { lastName: 'Doe' });
    const role = (await call('GET', '/api/roles')).body.data.find((r: { name: string }) => r.name === 'admin');
    await call('POST', `/api/users/${janeId}/roles`, 'acme', { roleId: role.id });
    await auditCaughtUp();

    const mine = (await entries('acme', `&userId=${admins.acme!.id}`)).filter((e) => e.resourceId === janeId).reverse();
    expect(mine.map((e) => e.action)).toEqual(['USER_CREATED', 'USER_UPDATED', 'ROLE_ASSIGNMENT']);
    const summary = { email: 'jane@acme.test', username: null, firstName: 'Jane', lastName: null, enabled: true, emailVerified: false, roles: ['user'], password: '[REDACTED]' };
    expect(mine[0]).toEqual({
      id: expect.any(String),
      action: 'USER_CREATED',
      userId: admins.acme!.id,
      resource: 'user',
      resourceId: janeId,
      status: 'success',
      errorCode: null,
      errorMessage: null,
      clientIp: '203.0.113.7',
      userAgent: UA,
      metadata: { before: null, after: summary },
      createdAt: created.body.data.createdAt,
    });
    expect(mine[1]!.metadata).toEqual({ before: summary, after: { ...summary, lastName: 'Doe' } });
    expect(mine[2]!.metadata).toEqual({
      role: { id: role.id, name: 'admin' },
      before: { ...summary, lastName: 'Doe' },
      after: { ...summary, lastName: 'Doe', roles: ['admin', 'user'] },
    });
    expect(JSON.stringify(mine)).not.toContain('argon2');
  });

  it('records logins: success, a wrong password (the account) and an unknown e-mail (null user) as LOGIN', async () => {
    const created = await call('POST', '/api/users', 'acme', { email: 'bob@acme.test', password: 'B0bPassword!' });
    const bobId = created.body.data.id;
    expect((await login('acme', 'bob@acme.test', 'B0bPassword!')).status).toBe(200);
    expect((await login('acme', 'bob@acme.test', 'wrong')).status).toBe(401);
    expect((await login('acme', 'ghost@acme.test', 'whatever')).status).toBe(401);
    const bobToken = (await login('acme', 'bob@acme.test', 'B0bPassword!')).body.data.accessToken;
    expect((await call('POST', '/api/auth/change-password', 'acme', { currentPassword: 'B0bPassword!', newPassword: 'N3wPassword!' }, bobToken)).status).toBe(200);
    await auditCaughtUp();

    const logins = (await entries('acme', '&action=LOGIN')).reverse();
    const bob = logins.filter((e) => e.resourceId === bobId);
    expect(bob.map((e) => [e.status, e.errorCode, e.userId])).toEqual([
      ['success', null, bobId],
      ['failure', 'INVALID_CREDENTIALS', bobId],
      ['success', null, bobId],
    ]);
    expect(bob[1]).toMatchObject({ errorMessage: expect.any(String), clientIp: '203.0.113.7', userAgent: UA, metadata: { reason: 'bad_password' } });
    const ghost = logins.find((e) => e.metadata?.email === 'ghost@acme.test');
    expect(ghost).toMatchObject({ status: 'failure', errorCode: 'INVALID_CREDENTIALS', userId: null, resource: 'user' });

    const [change] = await entries('acme', '&action=PASSWORD_CHANGE');
    expect(change).toMatchObject({ userId: bobId, resourceId: bobId, metadata: { passwordChanged: true } });
  });

  it('lists newest first with offset/limit pagination, clamps limit to 500 and refuses malformed values', async () => {
    await insertRows('initech', [
      { action: 'USER_UPDATED', at: '2026-03-01T10:00:00.000Z' },
      { action: 'USER_UPDATED', at: '2026-03-01T10:00:00.001Z' },
      { action: 'USER_UPDATED', at: '2026-03-01T10:00:00.002Z' },
    ]);
    const body = (query: string) => call('GET', `/api/logs/audit?action=USER_UPDATED&${query}`, 'initech');

    const first = await body('limit=2');
    expect(Object.keys(first.body).sort()).toEqual(['data', 'pagination']);
    expect(first.body.pagination).toEqual({ total: 3, limit: 2, offset: 0, hasMore: true });
    expect(first.body.data.map((e: { createdAt: string }) => e.createdAt)).toEqual(['2026-03-01T10:00:00.002Z', '2026-03-01T10:00:00.001Z']);
    const second = await body('limit=2&offset=2');
    expect(second.body.pagination).toEqual({ total: 3, limit: 2, offset: 2, hasMore: false });
    expect(second.body.data.map((e: { createdAt: string }) => e.createdAt)).toEqual(['2026-03-01T10:00:00.000Z']);

    expect((await body('limit=10000')).body.pagination.limit).toBe(500);
    expect((await call('GET', '/api/logs/audit', 'initech')).body.pagination).toMatchObject({ limit: 50, offset: 0 });
    const malformed = ['limit=abc', 'limit=0', 'limit=-1', 'limit=', 'offset=-1', 'offset=1.5', 'offset=abc'];
    const badDates = ['startDate=yesterday', 'endDate=2026-13-01', 'startDate=2026-03-01T10:00:00', 'startDate=2026-02-30', 'endDate=1700000000'];
    for (const bad of [...malformed, ...badDates]) {
      const response = await call('GET', `/api/logs/audit?${bad}`, 'initech');
      expect(response.status, bad).toBe(400);
      expect(response.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ path: expect.stringMatching(/^querystring\./), message: expect.any(String) }] });
    }
    // Unknown filters are refused, not ignored (the details name the key, never a value).
    for (const unknown of ['status=failure', 'resource=user', 'user_id=u1', 'actions=LOGIN']) {
      const response = await call('GET', `/api/logs/audit?${unknown}`, 'initech');
      expect(response.status, unknown).toBe(400);
      expect(response.body.error.code).toBe('VALIDATION_ERROR');
      expect(JSON.stringify(response.body.error.details)).toContain(unknown.split('=')[0]);
    }
  });

  it('counts at most 10,000 matching entries (or offset + limit + 1): total is then a lower bound, said by a header; hasMore stays exact', async () => {
    await t.db.pool.query(
      `insert into audit_log (tenant_id, id, action, status, created_at)
       select 'initech', gen_random_uuid(), 'SETTINGS_UPDATED', 'success', timestamptz '2026-06-01' + i * interval '1 second' from generate_series(1, 10001) as i`,
    );
    const first = await call('GET', '/api/logs/audit?action=SETTINGS_UPDATED&limit=10', 'initech');
    expect(first.body.pagination).toEqual({ total: 10_000, limit: 10, offset: 0, hasMore: true });
    expect(first.headers['x-total-count-capped']).toBe('true');
    const last = await call('GET', '/api/logs/audit?action=SETTINGS_UPDATED&limit=20&offset=9990', 'initech');
    expect(last.body.pagination).toEqual({ total: 10_001, limit: 20, offset: 9990, hasMore: false });
    expect(last.body.data).toHaveLength(11);
    expect(last.headers).not.toHaveProperty('x-total-count-capped');
    const small = await call('GET', '/api/logs/audit?action=SETTINGS_UPDATED&startDate=2026-06-01T00:00:01Z&endDate=2026-06-01T00:00:03Z', 'initech');
    expect(small.body.pagination).toEqual({ total: 3, limit: 50, offset: 0, hasMore: false });
    expect(small.headers).not.toHaveProperty('x-total-count-capped');
  });

  it('filters by dates (a date alone is the whole UTC day, both ends inclusive to the millisecond), action and user', async () => {
    await insertRows('initech', [
      { action: 'ROLE_CREATED', at: '2026-04-01T23:59:59.999Z', userId: 'u1' },
      { action: 'ROLE_CREATED', at: '2026-04-02T00:00:00.000Z', userId: 'u1' },
      { action: 'ROLE_CREATED', at: '2026-04-02T12:00:00.000Z', userId: 'u2' },
      { action: 'ROLE_CREATED', at: '2026-04-02T23:59:59.999Z', userId: 'u2' },
      { action: 'ROLE_CREATED', at: '2026-04-03T00:00:00.000Z', userId: 'u1' },
    ]);
    const times = async (query: string) => (await entries('initech', `&action=ROLE_CREATED&${query}`)).map((e) => e.createdAt).reverse();
    expect(await times('startDate=2026-04-02&endDate=2026-04-02')).toEqual(['2026-04-02T00:00:00.000Z', '2026-04-02T12:00:00.000Z', '2026-04-02T23:59:59.999Z']);
    expect(await times('startDate=2026-04-02T12:00:00.000Z&endDate=2026-04-02T23:59:59.999Z')).toEqual(['2026-04-02T12:00:00.000Z', '2026-04-02T23:59:59.999Z']);
    expect(await times('endDate=2026-04-02T23:59:59.998Z&startDate=2026-04-02T12:00:00.001Z')).toEqual([]);
    expect(await times('startDate=2026-04-02T14:00:00%2B02:00&endDate=2026-04-02T12:00:00Z')).toEqual(['2026-04-02T12:00:00.000Z']);
    expect(await times('userId=u2')).toEqual(['2026-04-02T12:00:00.000Z', '2026-04-02T23:59:59.999Z']);
    expect(await entries('initech', '&action=role.created')).toEqual([]);
  });

  it('leaves PERMISSION_CHECK out by default; any excludeActions replaces the default; action=PERMISSION_CHECK lists them', async () => {
    await insertRows('globex', [
      { action: 'PERMISSION_CHECK', at: '2026-05-01T00:00:00.000Z' },
      { action: 'PERMISSION_CHECK', at: '2026-05-01T00:00:01.000Z' },
      { action: 'TENANT_UPDATED', at: '2026-05-01T00:00:02.000Z' },
    ]);
    const actions = async (query: string) => new Set((await entries('globex', query)).map((e) => e.action));
    expect(await actions('')).not.toContain('PERMISSION_CHECK');
    expect(await actions('')).toContain('TENANT_UPDATED');
    expect(await actions('&excludeActions=')).toContain('PERMISSION_CHECK');
    const excludingOther = await actions('&excludeActions=TENANT_UPDATED,LOGIN');
    expect(excludingOther).toContain('PERMISSION_CHECK');
    expect(excludingOther).not.toContain('TENANT_UPDATED');
    expect(excludingOther).not.toContain('LOGIN');
    expect([...(await actions('&action=PERMISSION_CHECK'))]).toEqual(['PERMISSION_CHECK']);
    expect((await call('GET', '/api/logs/audit?action=PERMISSION_CHECK', 'globex')).body.pagination.total).toBe(2);
  });

  it("keeps tenants apart: a tenant's admin never sees another tenant's entries", async () => {
    await auditCaughtUp();
    const acme = await entries('acme');
    const globex = await entries('globex');
    expect(acme.length).toBeGreaterThan(0);
    const acmeIds = new Set(acme.map((e) => e.id));
    expect(globex.some((e) => acmeIds.has(e.id))).toBe(false);
    expect(globex.some((e) => e.userId === admins.acme!.id)).toBe(false);
    expect((await entries('globex', `&userId=${admins.acme!.id}`)).length).toBe(0);
    // acme's token in globex's header is another tenant's token
    expect((await call('GET', '/api/logs/audit', 'globex', undefined, admins.acme!.token)).status).toBe(401);
  });

  it('requires view:audit, and no method changes the log over HTTP', async () => {
    await call('POST', '/api/users', 'acme', { email: 'plain@acme.test', password: 'Pl4inPassword' });
    const plain = (await login('acme', 'plain@acme.test', 'Pl4inPassword')).body.data.accessToken;
    const denied = await call('GET', '/api/logs/audit', 'acme', undefined, plain);
    expect(denied.status).toBe(403);
    expect(denied.body.error.code).toBe('PERMISSION_DENIED');
    const [someId] = (await entries('acme')).map((e) => e.id);
    for (const method of ['PUT', 'PATCH', 'DELETE', 'POST']) {
      for (const url of ['/api/logs/audit', `/api/logs/audit/${someId}`]) {
        const response = await call(method, url, 'acme', method === 'DELETE' ? undefined : {});
        expect(response.status, `${method} ${url}`).toBe(405);
      }
    }
    expect((await entries('acme')).map((e) => e.id)).toContain(someId);
    // Nor the compliance history below a user.
    const history = `/api/users/${admins.acme!.id}/history`;
    const events = (await call('GET', history)).body.data;
    for (const method of ['PUT', 'PATCH', 'DELETE', 'POST']) {
      const response = await call(method, history, 'acme', method === 'DELETE' ? undefined : {});
      expect(response.status, `${method} ${history}`).toBeGreaterThanOrEqual(400);
    }
    expect((await call('GET', history)).body.data).toEqual(events);
  });

  it('refuses UPDATE, DELETE and TRUNCATE in SQL; a rebuild replays without touching existing entries', async () => {
    await auditCaughtUp();
    await t.service.permissionChecks.drain(); // the denials of the test before
    const before = (await t.db.pool.query('select * from audit_log order by tenant_id, id')).rows;
    await expect(t.db.pool.query("update audit_log set action = 'X' where tenant_id = 'acme'")).rejects.toThrow(/append-only \(UPDATE/);
    await expect(t.db.pool.query("delete from audit_log where tenant_id = 'acme'")).rejects.toThrow(/append-only \(DELETE/);
    await expect(t.db.pool.query('truncate audit_log')).rejects.toThrow(/append-only \(TRUNCATE/);

    await rebuildProjection(auditProjection, t.events, t.db.pool, pino({ level: 'silent' }));
    const after = (await t.db.pool.query('select * from audit_log order by tenant_id, id')).rows;
    expect(after).toEqual(before);
    // The summaries were rebuilt from the log: the next mutation's "before" is still right.
    const jane = (await entries('acme', '&action=USER_CREATED')).find((e) => e.metadata.after.email === 'jane@acme.test')!;
    await call('PUT', `/api/users/${jane.resourceId}`, 'acme', { firstName: 'Janet' });
    await auditCaughtUp();
    const [update] = (await entries('acme', '&action=USER_UPDATED')).filter((e) => e.resourceId === jane.resourceId);
    expect(update!.metadata.before).toMatchObject({ firstName: 'Jane', lastName: 'Doe', roles: ['admin', 'user'] });
    expect(update!.metadata.after).toMatchObject({ firstName: 'Janet' });
  });
});
