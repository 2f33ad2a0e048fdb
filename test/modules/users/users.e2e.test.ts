import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReservationNames } from '../../../src/platform/commands/reservation-names.ts';
import { PLATFORM, TEST_MASTER_KEY, startTestService, type TestService } from '../../support/service.ts';

const ADMIN = { email: 'root@platform.test', password: 'Sup3rSecret!' };

describe('users, roles and password login over HTTP', () => {
  let t: TestService;
  let admin: string;
  let adminId: string;
  const call = (method: string, url: string, body?: unknown, token = admin, tenant = 'acme') =>
    t.request({ method, url, body, token, tenant });

  beforeAll(async () => {
    t = await startTestService({ env: { IAM_BOOTSTRAP_ADMIN_EMAIL: ADMIN.email, IAM_BOOTSTRAP_ADMIN_PASSWORD: ADMIN.password } });
    const platformLogin = await t.request({ method: 'POST', url: '/api/auth/login', tenant: PLATFORM, body: ADMIN });
    expect(platformLogin.status).toBe(200);
    const created = await t.request({
      method: 'POST',
      url: '/api/tenants',
      tenant: PLATFORM,
      token: platformLogin.body.data.accessToken,
      body: { name: 'acme', adminEmail: 'admin@acme.test', adminPassword: 'Acme-Adm1n' },
    });
    expect(created.status).toBe(201);
    const login = await t.request({ method: 'POST', url: '/api/auth/login', tenant: 'acme', body: { email: 'admin@acme.test', password: 'Acme-Adm1n' } });
    admin = login.body.data.accessToken;
    adminId = JSON.parse(Buffer.from(admin.split('.')[1]!, 'base64url').toString()).sub;
  });
  afterAll(() => t.close());

  it('logs in with the decisions.md shape and an RS256 token with the documented claims', async () => {
    const login = await t.request({ method: 'POST', url: '/api/auth/login', tenant: 'acme', body: { email: 'ADMIN@acme.test', password: 'Acme-Adm1n' } });
    expect(login.status).toBe(200);
    // An administrator without a second factor, requireMfaForAdmin on by default: told to enrol one.
    expect(login.body).toEqual({
      ok: true,
      data: { accessToken: expect.any(String), refreshToken: expect.any(String), tokenType: 'Bearer', expiresIn: 900, sessionId: expect.any(String), mfaEnrollmentRequired: true },
    });
    const [header, payload] = login.body.data.accessToken.split('.').slice(0, 2).map((p: string) => JSON.parse(Buffer.from(p, 'base64url').toString()));
    expect(header).toMatchObject({ alg: 'RS256', kid: expect.any(String) });
    expect(payload).toMatchObject({ iss: 'http://iam.test', sub: adminId, aud: 'acme', tid: 'acme', sid: login.body.data.sessionId, roles: ['admin'], acr: 'aal1', amr: ['pwd'] });
    expect(payload.exp - payload.iat).toBe(900);
    expect(typeof payload.jti).toBe('string');
  });

  it('unknown user, wrong password and disabled user all get 401 INVALID_CREDENTIALS, and failures are events', async () => {
    const unknown = await t.request({ method: 'POST', url: '/api/auth/login', tenant: 'acme', body: { email: 'nobody@acme.test', password: 'x' } });
    const wrong = await t.request({ method: 'POST', url: '/api/auth/login', tenant: 'acme', body: { email: 'admin@acme.test', password: 'wrong' } });
    expect(unknown.status).toBe(401);
    expect(unknown.body).toEqual(wrong.body);
    expect(wrong.body.error.code).toBe('INVALID_CREDENTIALS');
    const failures = await t.db.pool.query("select data->>'reason' as reason from events where type = 'LoginFailed' and metadata->>'tenantId' = 'acme'");
    expect(failures.rows.map((r) => r.reason)).toContain('bad_password');

    const user = await call('POST', '/api/users', { email: 'dis@acme.test', password: 'Passw0rdOk' });
    await call('PUT', `/api/users/${user.body.data.id}`, { enabled: false });
    const disabled = await t.request({ method: 'POST', url: '/api/auth/login', tenant: 'acme', body: { email: 'dis@acme.test', password: 'Passw0rdOk' } });
    expect(disabled.body).toEqual(wrong.body);
  });

  it('creates a user (201) with the default role and reads the full object back at once', async () => {
    const created = await call('POST', '/api/users', { email: 'Jane@Acme.test', username: 'jane', firstName: 'Jane', lastName: 'Doe', password: 'Str0ngPass' });
    expect(created.status).toBe(201);
    expect(created.body.data).toEqual({
      id: expect.any(String),
      email: 'Jane@Acme.test',
      username: 'jane',
      firstName: 'Jane',
      lastName: 'Doe',
      enabled: true,
      emailVerified: false,
      createdAt: expect.any(String),
      roles: ['user'],
      phoneNumber: null,
      phoneNumberVerified: false,
      lastLoginAt: null,
      lockedUntil: null,
      twoFactor: { totpEnabled: false, smsEnabled: false, webauthnEnabled: false },
    });
    const read = await call('GET', `/api/users/${created.body.data.id}`);
    expect(read.body.data).toEqual(created.body.data);
    // The log holds the e-mail sealed (docs/erasure.md): find the event by the user's id.
    const events = await t.db.pool.query("select data from events where type = 'UserCreated' and data->>'userId' = $1", [created.body.data.id]);
    expect(events.rows[0].data.passwordHash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(JSON.stringify(events.rows[0].data)).not.toContain('Str0ngPass');
  });

  it('EMAIL_TAKEN and USERNAME_TAKEN are case-insensitive, and only one of concurrent creates wins', async () => {
    await call('POST', '/api/users', { email: 'dup@acme.test', username: 'dupe' });
    expect((await call('POST', '/api/users', { email: 'DUP@acme.test' })).body.error.code).toBe('EMAIL_TAKEN');
    expect((await call('POST', '/api/users', { email: 'other@acme.test', username: 'DUPE' })).body.error.code).toBe('USERNAME_TAKEN');
    const race = await Promise.all([1, 2, 3, 4].map(() => call('POST', '/api/users', { email: 'race@acme.test' })));
    expect(race.map((r) => r.status).sort()).toEqual([201, 409, 409, 409]);
    const { rows } = await t.db.pool.query("select count(*)::int as n from users where tenant_id = 'acme' and lower(email) = 'race@acme.test'");
    expect(rows[0].n).toBe(1);
    const { keyed } = new ReservationNames(TEST_MASTER_KEY).streamsOf('acme', 'email', 'race@acme.test');
    const claims = await t.db.pool.query("select count(*)::int as n from events where type = 'ReservationClaimed' and stream_id = $1", [keyed]);
    expect(claims.rows[0].n).toBe(1);
  });

  it('lists with paging, search, role and status filters', async () => {
    for (const [i, first] of ['Alpha', 'Bravo', 'Charlie'].entries()) {
      await call('POST', '/api/users', { email: `list${i}@acme.test`, firstName: first, roles: i === 0 ? ['admin'] : undefined });
    }
    const page = await call('GET', '/api/users?page=1&limit=2');
    expect(page.body.data.data).toHaveLength(2);
    expect(page.body.data.pagination).toEqual({ page: 1, limit: 2, total: expect.any(Number), totalPages: Math.ceil(page.body.data.pagination.total / 2) });
    expect(Object.keys(page.body.data.data[0]).sort()).toEqual(['createdAt', 'email', 'emailVerified', 'enabled', 'firstName', 'id', 'lastName', 'roles', 'username']);
    const search = await call('GET', '/api/users?search=brav');
    expect(search.body.data.data.map((u: { email: string }) => u.email)).toEqual(['list1@acme.test']);
    const byRole = await call('GET', '/api/users?role=admin');
    expect(byRole.body.data.data.map((u: { email: string }) => u.email).sort()).toEqual(['admin@acme.test', 'list0@acme.test']);
    const disabled = await call('GET', '/api/users?status=disabled');
    expect(disabled.body.data.data.map((u: { email: string }) => u.email)).toEqual(['dis@acme.test']);
    expect((await call('GET', '/api/users?limit=101')).body.error.code).toBe('VALIDATION_ERROR');
    const v1 = await call('GET', '/api/v1/users?page=1&pageSize=2');
    expect(v1.body.pagination).toEqual({ page: 1, pageSize: 2, total: page.body.data.pagination.total, totalPages: page.body.data.pagination.totalPages });
  });

  it('updates only supplied fields, deletes softly (email reusable, login fails)', async () => {
    const user = (await call('POST', '/api/users', { email: 'upd@acme.test', firstName: 'A', lastName: 'B', password: 'Upd4tePass' })).body.data;
    const updated = await call('PUT', `/api/users/${user.id}`, { firstName: 'Z' });
    expect(updated.body).toEqual({ ok: true, data: { id: user.id, email: 'upd@acme.test', firstName: 'Z', enabled: true } });
    expect((await call('GET', `/api/users/${user.id}`)).body.data.lastName).toBe('B');

    expect((await call('DELETE', `/api/users/${user.id}`)).body).toEqual({ ok: true, data: { deleted: true } });
    expect((await call('GET', `/api/users/${user.id}`)).status).toBe(404);
    expect((await call('DELETE', `/api/users/${user.id}`)).status).toBe(404);
    const login = await t.request({ method: 'POST', url: '/api/auth/login', tenant: 'acme', body: { email: 'upd@acme.test', password: 'Upd4tePass' } });
    expect(login.status).toBe(401);
    expect((await call('POST', '/api/users', { email: 'upd@acme.test' })).status).toBe(201);
  });

  it('assigns and removes roles: no-op when repeated, NOT_FOUND for unknown role, SELF_ROLE_CHANGE for oneself', async () => {
    const user = (await call('POST', '/api/users', { email: 'roles@acme.test' })).body.data;
    const roles = (await call('GET', '/api/roles')).body.data as { id: string; name: string }[];
    const adminRole = roles.find((r) => r.name === 'admin')!;
    expect((await call('POST', `/api/users/${user.id}/roles`, { roleId: adminRole.id })).body).toEqual({ ok: true, data: { assigned: true } });
    expect((await call('POST', `/api/users/${user.id}/roles`, { roleId: adminRole.id })).body).toEqual({ ok: true, data: { assigned: true } });
    const list = await call('GET', `/api/users/${user.id}/roles`);
    expect(list.body.data.map((r: { name: string }) => r.name)).toEqual(['admin', 'user']);
    expect(Object.keys(list.body.data[0]).sort()).toEqual(['color', 'description', 'id', 'name']);
    expect((await call('POST', `/api/users/${user.id}/roles`, { roleId: '0190f0f0-0000-7000-8000-000000000000' })).status).toBe(404);
    expect((await call('POST', `/api/users/${adminId}/roles`, { roleId: adminRole.id })).body.error.code).toBe('SELF_ROLE_CHANGE');
    expect((await call('DELETE', `/api/users/${user.id}/roles`, { roleId: adminRole.id })).body).toEqual({ ok: true, data: { removed: true } });
    expect((await call('DELETE', `/api/users/${user.id}/roles`, { roleId: adminRole.id })).body).toEqual({ ok: true, data: { removed: true } });
    const assigned = await t.db.pool.query("select count(*)::int as n from events where type = 'UserRoleAssigned' and data->>'userId' = $1", [user.id]);
    expect(assigned.rows[0].n).toBe(1);
  });

  it('a manage:users holder cannot grant roles beyond its own permissions (admin), on create or by assignment', async () => {
    const roles = (await call('GET', '/api/roles')).body.data as { id: string; name: string }[];
    const adminRole = roles.find((r) => r.name === 'admin')!;
    const helpdeskRole = (await call('POST', '/api/roles', { name: 'helpdesk', permissions: ['manage:users'] })).body.data;
    await call('POST', '/api/users', { email: 'helpdesk@acme.test', password: 'Helpd3skPass', roles: ['helpdesk'] });
    const helpdesk = (await t.request({ method: 'POST', url: '/api/auth/login', tenant: 'acme', body: { email: 'helpdesk@acme.test', password: 'Helpd3skPass' } })).body.data.accessToken;
    const asHelpdesk = (method: string, url: string, body?: unknown) => call(method, url, body, helpdesk);
    expect((await asHelpdesk('GET', '/api/roles')).status).toBe(403);

    // A second account of its own making, holding admin: the helpdesk would hold admin:all.
    const created = await asHelpdesk('POST', '/api/users', { email: 'sock-puppet@acme.test', password: 'Pupp3tPass', roles: ['admin'] });
    expect.soft([created.status, created.body.error?.code]).toEqual([403, 'PERMISSION_DENIED']);
    if (created.status === 201) {
      const puppet = (await t.request({ method: 'POST', url: '/api/auth/login', tenant: 'acme', body: { email: 'sock-puppet@acme.test', password: 'Pupp3tPass' } })).body.data.accessToken;
      expect((await call('GET', '/api/roles', undefined, puppet)).status, 'the helpdesk reached an admin:all route').toBe(403);
    }

    const plain = (await asHelpdesk('POST', '/api/users', { email: 'plain@acme.test', password: 'Pl4inPass' })).body.data;
    const assigned = await asHelpdesk('POST', `/api/users/${plain.id}/roles`, { roleId: adminRole.id });
    expect([assigned.status, assigned.body.error?.code]).toEqual([403, 'PERMISSION_DENIED']);
    expect((await call('GET', `/api/users/${plain.id}`)).body.data.roles).toEqual(['user']);
    // Nor can it demote an administrator.
    const demoted = await asHelpdesk('DELETE', `/api/users/${adminId}/roles`, { roleId: adminRole.id });
    expect([demoted.status, demoted.body.error?.code]).toEqual([403, 'PERMISSION_DENIED']);
    // Roles within its own permissions stay grantable.
    expect((await asHelpdesk('POST', `/api/users/${plain.id}/roles`, { roleId: helpdeskRole.id })).status).toBe(200);
  });

  it('a manage:users holder cannot take over, disable or delete a user holding permissions beyond its own', async () => {
    await call('POST', '/api/roles', { name: 'support', permissions: ['manage:users'] });
    await call('POST', '/api/users', { email: 'support@acme.test', password: 'Supp0rtPass', roles: ['support'] });
    const support = (await t.request({ method: 'POST', url: '/api/auth/login', tenant: 'acme', body: { email: 'support@acme.test', password: 'Supp0rtPass' } })).body.data.accessToken;
    const asSupport = (method: string, url: string, body?: unknown) => call(method, url, body, support);
    const boss = (await call('POST', '/api/users', { email: 'boss@acme.test', password: 'B0ssPassword', roles: ['admin'] })).body.data;

    // Moving the administrator's e-mail to a mailbox of its own would let a password reset hand it the account.
    for (const [method, body] of [['PUT', { email: 'support-inbox@acme.test' }], ['PUT', { enabled: false }], ['DELETE', undefined]] as const) {
      const answer = await asSupport(method, `/api/users/${boss.id}`, body);
      expect([method, JSON.stringify(body), answer.status, answer.body.error?.code]).toEqual([method, JSON.stringify(body), 403, 'PERMISSION_DENIED']);
    }
    expect((await call('GET', `/api/users/${boss.id}`)).body.data).toMatchObject({ email: 'boss@acme.test', enabled: true });
    // Users within its own permissions stay manageable.
    const plain = (await asSupport('POST', '/api/users', { email: 'plain-2@acme.test' })).body.data;
    expect((await asSupport('PUT', `/api/users/${plain.id}`, { firstName: 'Pat' })).status).toBe(200);
    expect((await asSupport('DELETE', `/api/users/${plain.id}`)).status).toBe(200);
  });

  it("a disabled or deleted administrator's unexpired access token no longer reaches admin routes", async () => {
    const signIn = async (email: string) => (await t.request({ method: 'POST', url: '/api/auth/login', tenant: 'acme', body: { email, password: 'Form3rAdmin' } })).body.data.accessToken as string;
    const disabledAdmin = (await call('POST', '/api/users', { email: 'ex-admin-1@acme.test', password: 'Form3rAdmin', roles: ['admin'] })).body.data;
    const deletedAdmin = (await call('POST', '/api/users', { email: 'ex-admin-2@acme.test', password: 'Form3rAdmin', roles: ['admin'] })).body.data;
    const [disabledToken, deletedToken] = [await signIn('ex-admin-1@acme.test'), await signIn('ex-admin-2@acme.test')];
    expect((await call('GET', '/api/users', undefined, disabledToken)).status).toBe(200);
    expect((await call('GET', '/api/users', undefined, deletedToken)).status).toBe(200);

    expect((await call('PUT', `/api/users/${disabledAdmin.id}`, { enabled: false })).status).toBe(200);
    expect((await call('DELETE', `/api/users/${deletedAdmin.id}`)).status).toBe(200);
    for (const token of [disabledToken, deletedToken]) {
      const listed = await call('GET', '/api/users', undefined, token);
      expect([listed.status, listed.body.error?.code]).toEqual([401, 'TOKEN_INVALID']);
      const created = await call('POST', '/api/users', { email: `revenge-${token.slice(-8)}@acme.test`, roles: ['admin'] }, token);
      expect([created.status, created.body.error?.code]).toEqual([401, 'TOKEN_INVALID']);
    }
  });

  it('roles CRUD: 201, ROLE_NAME_TAKEN 409, unknown permission 400, and permissions take effect', async () => {
    const created = await call('POST', '/api/roles', { name: 'auditor', description: 'Reads users', color: '#123456', permissions: ['manage:users'] });
    expect(created.status).toBe(201);
    expect(created.body.data).toEqual({ id: expect.any(String), name: 'auditor', description: 'Reads users', color: '#123456', permissions: ['manage:users'], createdAt: expect.any(String) });
    expect((await call('POST', '/api/roles', { name: 'AUDITOR' })).body.error.code).toBe('ROLE_NAME_TAKEN');
    expect((await call('POST', '/api/roles', { name: 'x', permissions: ['fly:planes'] })).body.error.code).toBe('VALIDATION_ERROR');

    const user = (await call('POST', '/api/users', { email: 'auditor@acme.test', password: 'Aud1torPass', roles: ['auditor'] })).body.data;
    const token = (await t.request({ method: 'POST', url: '/api/auth/login', tenant: 'acme', body: { email: 'auditor@acme.test', password: 'Aud1torPass' } })).body.data.accessToken;
    expect((await call('GET', '/api/users', undefined, token)).status).toBe(200);
    expect((await call('GET', '/api/roles', undefined, token)).body.error.code).toBe('PERMISSION_DENIED');

    const renamed = await call('PUT', `/api/roles/${created.body.data.id}`, { name: 'reader' });
    expect(renamed.body.data.name).toBe('reader');
    expect((await call('POST', '/api/roles', { name: 'auditor' })).status).toBe(201);
    expect((await call('DELETE', `/api/roles/${created.body.data.id}`)).body).toEqual({ ok: true, data: { deleted: true } });
    expect((await call('GET', `/api/users/${user.id}`)).body.data.roles).toEqual([]);
    const v1 = await call('GET', '/api/v1/roles');
    expect(v1.body.pagination.totalPages).toBe(1);
  });

  it('tenant isolation: every users and roles endpoint answers 404 to another tenant\'s ids', async () => {
    const platformAdmin = (await t.request({ method: 'POST', url: '/api/auth/login', tenant: PLATFORM, body: ADMIN })).body.data.accessToken;
    await t.request({ method: 'POST', url: '/api/tenants', tenant: PLATFORM, token: platformAdmin, body: { name: 'globex', adminEmail: 'admin@globex.test', adminPassword: 'Gl0bex-Adm' } });
    const globex = (await t.request({ method: 'POST', url: '/api/auth/login', tenant: 'globex', body: { email: 'admin@globex.test', password: 'Gl0bex-Adm' } })).body.data.accessToken;
    const acmeUser = (await call('POST', '/api/users', { email: 'iso@acme.test' })).body.data;
    const acmeRole = (await call('GET', '/api/roles')).body.data[0];
    const asGlobex = (method: string, url: string, body?: unknown) => call(method, url, body, globex, 'globex');
    for (const [method, url, body] of [
      ['GET', `/api/users/${acmeUser.id}`],
      ['PUT', `/api/users/${acmeUser.id}`, { firstName: 'x' }],
      ['DELETE', `/api/users/${acmeUser.id}`],
      ['GET', `/api/users/${acmeUser.id}/roles`],
      ['POST', `/api/users/${acmeUser.id}/roles`, { roleId: acmeRole.id }],
      ['GET', `/api/roles/${acmeRole.id}`],
      ['PUT', `/api/roles/${acmeRole.id}`, { description: 'x' }],
      ['DELETE', `/api/roles/${acmeRole.id}`],
      ['GET', `/api/v1/users/${acmeUser.id}`],
      ['GET', `/api/v1/roles/${acmeRole.id}`],
    ] as const) {
      const response = await asGlobex(method, url, body);
      expect([url, method, response.status]).toEqual([url, method, 404]);
    }
    expect((await asGlobex('GET', '/api/users?search=iso')).body.data.data).toEqual([]);
    // Ids that cannot be UUIDs name nothing: 404, never a server error.
    for (const [method, url, body] of [
      ['GET', '/api/users/not-a-uuid'],
      ['GET', '/api/users/not-a-uuid/roles'],
      ['PUT', '/api/users/not-a-uuid', { firstName: 'x' }],
      ['DELETE', '/api/users/not-a-uuid'],
      ['GET', '/api/roles/not-a-uuid'],
    ] as const) {
      expect([url, method, (await call(method, url, body)).status]).toEqual([url, method, 404]);
    }
    // A token of acme does not work with x-tenant globex.
    expect((await call('GET', '/api/users', undefined, admin, 'globex')).status).toBe(401);
    expect((await call('GET', `/api/users/${acmeUser.id}`)).body.data.email).toBe('iso@acme.test');
  });

  it('rejects weak passwords with the spec messages and creates nothing', async () => {
    const short = await call('POST', '/api/users', { email: 'weak@acme.test', password: 'Ab1' });
    expect([short.status, short.body.error.message]).toEqual([400, 'Password below the minimum length']);
    const simple = await call('POST', '/api/users', { email: 'weak@acme.test', password: 'alllowercase' });
    expect(simple.body.error.message).toBe('Password fails complexity rules');
    expect((await call('POST', '/api/users', { email: 'not-an-email' })).body.error.code).toBe('VALIDATION_ERROR');
    expect((await call('POST', '/api/users', { email: 'x@acme.test', roles: ['ghost'] })).body.error.code).toBe('VALIDATION_ERROR');
    expect((await call('GET', '/api/users?search=weak')).body.data.data).toEqual([]);
  });
});
