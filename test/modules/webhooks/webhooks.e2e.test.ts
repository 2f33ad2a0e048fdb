import { base32Decode, timeStep, totpCode } from '../../../src/modules/mfa/totp.ts';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { AUDIT_MAPPING } from '../../../src/modules/audit/event-mapping.ts';
import { startHttpsReceiver, type HttpsReceiver } from '../../support/https-receiver.ts';
import { PLATFORM, type TestService } from '../../support/service.ts';
import { startSmtpServer, type TestSmtpServer } from '../../support/smtp-server.ts';
import { ADMIN, adminToken, startWebhookService, verifiesWith, WAIT } from './webhook-fixtures.ts';

describe('webhook subscriptions over HTTP', () => {
  let receiver: HttpsReceiver;
  let smtp: TestSmtpServer;
  let t: TestService;
  let token: string;
  const call = (method: string, url: string, body?: unknown, as = token, tenant = PLATFORM) => t.request({ method, url, body, token: as, tenant });
  const deliveriesOf = async (webhookId: string) => (await call('GET', `/api/webhooks/${webhookId}/deliveries`)).body.data.data;
  const create = async (overrides: Record<string, unknown> = {}) => {
    const created = await call('POST', '/api/webhooks', { name: 'crm', url: receiver.url, events: ['user.created'], ...overrides });
    expect(created.status).toBe(201);
    return created.body.data as { id: string; signingSecret: string };
  };

  beforeAll(async () => {
    receiver = await startHttpsReceiver();
    smtp = await startSmtpServer();
    // One retry 200 ms after the first attempt: a delivery fails for good after two attempts.
    t = await startWebhookService(receiver, { env: { IAM_WEBHOOK_RETRY_SCHEDULE: '200ms', SMTP_URL: smtp.url } });
    token = await adminToken(t);
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
    await smtp.close();
  });

  it('creates a subscription answering the secret once; every read masks it and no event holds it', async () => {
    const created = await call('POST', '/api/webhooks', { name: 'crm', url: receiver.url, events: ['user.created', 'role.removed'] });
    expect(created.status).toBe(201);
    const secret: string = created.body.data.signingSecret;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{40,}$/);
    expect(created.body.data).toMatchObject({ name: 'crm', url: receiver.url, events: ['user.created', 'role.unassigned'], isActive: true });

    const masked = `whsec_...${secret.slice(-4)}`;
    const read = await call('GET', `/api/webhooks/${created.body.data.id}`);
    expect(read.body).toEqual({ ok: true, data: { ...created.body.data, signingSecret: masked } });
    const list = await call('GET', '/api/webhooks');
    expect(list.body.data.find((hook: { id: string }) => hook.id === created.body.data.id).signingSecret).toBe(masked);
    const { rows } = await t.db.pool.query("select count(*)::int as n from events where data::text like '%' || $1 || '%'", [secret.slice(6)]);
    expect(rows[0].n).toBe(0);

    const audit = await call('GET', '/api/logs/audit?action=WEBHOOK_CREATED');
    const entry = audit.body.data.find((item: { resourceId: string }) => item.resourceId === created.body.data.id);
    // The audit entry summarises the subscription without any part of its secret.
    expect(entry).toMatchObject({ resource: 'webhook', status: 'success' });
    expect(entry.metadata.after).toEqual({ name: 'crm', url: receiver.url, events: ['user.created', 'role.unassigned'], isActive: true });
    expect(JSON.stringify(entry)).not.toMatch(/secret|whsec_/i);
  });

  it('refuses http URLs, internal and metadata addresses, and unknown event types with 400 VALIDATION_ERROR', async () => {
    const refused = [
      { url: 'http://example.com/hook', events: ['*'] },
      { url: 'https://169.254.169.254/latest/meta-data', events: ['*'] },
      { url: 'https://[fd00:ec2::254]/', events: ['*'] },
      { url: receiver.url, events: ['user.created', 'user.teleported'] },
      { url: receiver.url, events: [] },
    ];
    for (const body of refused) {
      const answer = await call('POST', '/api/webhooks', { name: 'bad', ...body });
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body.error.code).toBe('VALIDATION_ERROR');
    }
  });

  it('updates, deletes, and answers 404 for unknown ids, 403 without manage:webhooks', async () => {
    const hook = await create();
    const updated = await call('PUT', `/api/webhooks/${hook.id}`, { name: 'crm v2', events: ['*'], isActive: false });
    expect(updated.body.data).toMatchObject({ id: hook.id, name: 'crm v2', events: ['*'], isActive: false });
    expect((await call('DELETE', `/api/webhooks/${hook.id}`)).body).toEqual({ ok: true, data: { deleted: true } });
    expect((await call('GET', `/api/webhooks/${hook.id}`)).status).toBe(404);
    expect((await call('PUT', `/api/webhooks/${hook.id}`, { name: 'x' })).status).toBe(404);
    expect((await call('GET', '/api/webhooks/not-a-uuid/deliveries')).status).toBe(404);

    const plainUser = await t.token({ sub: '01900000-0000-7000-8000-000000000001', tenant: PLATFORM, roles: ['user'] });
    expect((await call('GET', '/api/webhooks', undefined, plainUser)).status).toBe(403);
  });

  it('sends a signed webhook.test event and logs the delivery', async () => {
    const hook = await create();
    receiver.answer({ status: 200, body: 'pong' });
    const test = await call('POST', `/api/webhooks/${hook.id}/test`);
    expect(test.status).toBe(200);
    expect(test.body.data).toMatchObject({ eventType: 'webhook.test', attempt: 0, status: 'pending' });
    await vi.waitFor(async () => expect((await deliveriesOf(hook.id))[0]).toMatchObject({ id: test.body.data.id, status: 'delivered', attempt: 1, responseStatus: 200, responseBody: 'pong' }), WAIT);
    const request = receiver.requests.find((r) => JSON.parse(r.body).id === test.body.data.eventId)!;
    expect(JSON.parse(request.body)).toMatchObject({ type: 'webhook.test', data: { webhookId: hook.id } });
    expect(verifiesWith(hook.signingSecret, request)).toBe(true);
  });

  it('during the 24-hour grace after a rotation, deliveries carry both signatures, the new one first', async () => {
    const hook = await create();
    const rotated = await call('POST', `/api/webhooks/${hook.id}/rotate-secret`);
    expect(rotated.body.data).toEqual({ id: hook.id, signingSecret: expect.stringMatching(/^whsec_/), previousSecretExpiresAt: expect.any(String) });
    const graceMs = Date.parse(rotated.body.data.previousSecretExpiresAt) - Date.now();
    expect(graceMs).toBeGreaterThan(24 * 3600_000 - 60_000);
    expect(graceMs).toBeLessThanOrEqual(24 * 3600_000);

    receiver.answer({ status: 200 });
    const test = await call('POST', `/api/webhooks/${hook.id}/test`);
    await vi.waitFor(() => expect(receiver.requests.some((r) => JSON.parse(r.body).id === test.body.data.eventId)).toBe(true), WAIT);
    const request = receiver.requests.find((r) => JSON.parse(r.body).id === test.body.data.eventId)!;
    const [first, second] = String(request.headers['x-webhook-signature']).split(',');
    expect(verifiesWith(rotated.body.data.signingSecret, { ...request, headers: { ...request.headers, 'x-webhook-signature': first } })).toBe(true);
    expect(verifiesWith(hook.signingSecret, { ...request, headers: { ...request.headers, 'x-webhook-signature': second } })).toBe(true);
  });

  it('retries a failed delivery on demand; a delivered one cannot be retried', async () => {
    const hook = await create();
    receiver.answer({ status: 500 });
    const test = await call('POST', `/api/webhooks/${hook.id}/test`);
    await vi.waitFor(async () => expect((await deliveriesOf(hook.id))[0]).toMatchObject({ status: 'failed', attempt: 2, responseStatus: 500, nextAttemptAt: null }), WAIT);

    receiver.answer({ status: 200 });
    const retried = await call('POST', `/api/webhooks/${hook.id}/deliveries/${test.body.data.id}/retry`);
    expect(retried.status).toBe(200);
    await vi.waitFor(async () => expect((await deliveriesOf(hook.id))[0]).toMatchObject({ status: 'delivered', attempt: 3 }), WAIT);
    const again = await call('POST', `/api/webhooks/${hook.id}/deliveries/${test.body.data.id}/retry`);
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('DELIVERY_NOT_FAILED');
  });

  it('deactivates a subscription after 10 consecutive failed deliveries (a delivered one resets the count) and e-mails the tenant admins; reactivation resumes deliveries', async () => {
    const hook = await create();
    const statusesOf = async () => (await deliveriesOf(hook.id)).map((delivery: { status: string }) => delivery.status);
    const failTests = async (count: number) => {
      const before = (await statusesOf()).filter((status: string) => status === 'failed').length;
      for (let i = 0; i < count; i++) await call('POST', `/api/webhooks/${hook.id}/test`);
      await vi.waitFor(async () => expect((await statusesOf()).filter((status: string) => status === 'failed').length).toBe(before + count), WAIT);
    };
    receiver.answer({ status: 502 });
    // 9 failed deliveries (18 failed attempts), then a delivered one: still active, the count starts again.
    await failTests(9);
    expect((await call('GET', `/api/webhooks/${hook.id}`)).body.data.isActive).toBe(true);
    receiver.answer({ status: 200 });
    await call('POST', `/api/webhooks/${hook.id}/test`);
    await vi.waitFor(async () => expect(await statusesOf()).toContain('delivered'), WAIT);
    receiver.answer({ status: 502 });
    await failTests(9);
    expect((await call('GET', `/api/webhooks/${hook.id}`)).body.data.isActive).toBe(true);
    await failTests(1);

    const mail = await smtp.waitForMessage((message) => message.subject === 'A webhook subscription was deactivated', 30_000);
    expect(mail.to).toEqual([ADMIN.email]);
    expect(mail.text).toContain('10 consecutive failed deliveries');
    await vi.waitFor(async () => expect((await call('GET', `/api/webhooks/${hook.id}`)).body.data.isActive).toBe(false), WAIT);
    const { rows } = await t.db.pool.query("select data from events where type = 'WebhookDeactivated' and data->>'webhookId' = $1", [hook.id]);
    expect(rows).toEqual([{ data: { webhookId: hook.id, consecutiveFailures: 10 } }]);

    // Events while inactive are not sent to it.
    await call('POST', '/api/users', { email: 'while-inactive@platform.test', password: 'Passw0rdOk' });
    expect((await call('PUT', `/api/webhooks/${hook.id}`, { isActive: true })).body.data.isActive).toBe(true);
    receiver.answer({ status: 200 });
    const user = await call('POST', '/api/users', { email: 'after@platform.test', password: 'Passw0rdOk' });
    await vi.waitFor(async () => expect((await deliveriesOf(hook.id))[0]).toMatchObject({ eventType: 'user.created', status: 'delivered' }), WAIT);
    const userEvents = (await deliveriesOf(hook.id)).filter((delivery: { eventType: string }) => delivery.eventType === 'user.created');
    const { rows: created } = await t.db.pool.query("select event_id from events where type = 'UserCreated' and data->>'userId' = $1", [user.body.data.id]);
    expect(userEvents.map((delivery: { eventId: string }) => delivery.eventId)).toEqual([created[0].event_id]);
  });

  it('exports attempts by outcome, the queue depth and the oldest due age', async () => {
    const hook = await create();
    receiver.answer('hang');
    await call('POST', `/api/webhooks/${hook.id}/test`);
    const metrics = await t.request({ method: 'GET', url: '/metrics' });
    const value = (series: string) => Number(new RegExp(`^${series.replace(/[{}]/g, '\\$&')} (\\S+)$`, 'm').exec(metrics.body)?.[1]);
    expect(value('iam_outbound_deliveries_total{feature="webhooks",outcome="delivered"}')).toBeGreaterThan(0);
    expect(value('iam_outbound_deliveries_total{feature="webhooks",outcome="failed"}')).toBeGreaterThan(0);
    expect(value('iam_outbound_queue_depth{feature="webhooks"}')).toBeGreaterThanOrEqual(1);
    expect(value('iam_outbound_oldest_due_seconds{feature="webhooks"}')).toBeGreaterThanOrEqual(0);
  });

  it('sends user and role data as decisions.md shapes them, each as of its event', async () => {
    const url = `${receiver.url}?for=shapes`;
    await create({ url, events: ['user.updated', 'user.blocked', 'user.deleted', 'role.assigned', 'role.unassigned', 'role.updated', 'login.failed'] });
    receiver.answer({ status: 200 });
    const user = (await call('POST', '/api/users', { email: 'shape@platform.test', password: 'Passw0rdOk', firstName: 'Grace' })).body.data;
    const role = (await call('POST', '/api/roles', { name: 'shapers', description: 'Shapes', color: '#123456' })).body.data;
    await call('POST', `/api/users/${user.id}/roles`, { roleId: role.id });
    await call('PUT', `/api/users/${user.id}`, { lastName: 'Hopper' });
    await call('PUT', `/api/roles/${role.id}`, { description: 'Shapes things' });
    await call('DELETE', `/api/users/${user.id}/roles`, { roleId: role.id });
    await call('PUT', `/api/users/${user.id}`, { enabled: false });
    await call('DELETE', `/api/users/${user.id}`);
    await t.request({ method: 'POST', url: '/api/auth/login', tenant: PLATFORM, body: { email: 'nobody@platform.test', password: 'guess' } });

    const byType = () => new Map(receiver.requests.filter((r) => r.url.endsWith('?for=shapes')).map((r) => [JSON.parse(r.body).type, JSON.parse(r.body).data]));
    await vi.waitFor(() => expect(byType().size).toBe(7), WAIT);
    const data = byType();
    const asUser = { id: user.id, email: 'shape@platform.test', firstName: 'Grace', emailVerified: false, createdAt: user.createdAt };
    expect(data.get('role.assigned')).toEqual({ userId: user.id, roleId: role.id, roleName: 'shapers' });
    expect(data.get('role.unassigned')).toEqual({ userId: user.id, roleId: role.id, roleName: 'shapers' });
    expect(data.get('user.updated')).toEqual({ ...asUser, lastName: 'Hopper', roles: ['user', 'shapers'] });
    expect(data.get('user.blocked')).toEqual({ ...asUser, lastName: 'Hopper', roles: ['user'] });
    expect(data.get('user.deleted')).toEqual({ ...asUser, lastName: 'Hopper', roles: ['user'] });
    expect(data.get('role.updated')).toEqual({ ...role, description: 'Shapes things' });
    expect(data.get('login.failed')).toEqual({ userId: null, reason: 'unknown_user' });
  });

  it('delivers every catalogue type the service emits today (the mapping table), with the data docs/webhooks.md describes', async () => {
    const url = `${receiver.url}?for=every`;
    await create({ url, events: ['*'] });
    receiver.answer({ status: 200 });
    const user = (await call('POST', '/api/users', { email: 'every@platform.test', password: 'Passw0rdOk', firstName: 'Ada' })).body.data;
    const login = await t.request({ method: 'POST', url: '/api/auth/login', tenant: PLATFORM, body: { email: 'every@platform.test', password: 'Passw0rdOk' } });
    expect(login.status).toBe(200);
    const changed = await call('POST', '/api/auth/change-password', { currentPassword: 'Passw0rdOk', newPassword: 'N3wPassw0rd!' }, login.body.data.accessToken);
    expect(changed.status).toBe(200);
    // TOTP on: the next password login stops at the second factor (login.mfa_required).
    const secret = (await call('POST', '/api/user/2fa/totp/setup', undefined, login.body.data.accessToken)).body.data.secret;
    const code = totpCode(base32Decode(secret), timeStep(new Date()));
    expect((await call('POST', '/api/user/2fa/totp/enable', { code }, login.body.data.accessToken)).status).toBe(200);
    const challenged = await t.request({ method: 'POST', url: '/api/auth/login', tenant: PLATFORM, body: { email: 'every@platform.test', password: 'N3wPassw0rd!' } });
    expect(challenged.body.data.mfaRequired).toBe(true);
    await t.request({ method: 'POST', url: '/api/auth/login', tenant: PLATFORM, body: { email: 'every@platform.test', password: 'wrong-guess' } });
    await call('PUT', `/api/users/${user.id}`, { lastName: 'Lovelace' });
    await call('PUT', `/api/users/${user.id}`, { enabled: false });
    await call('PUT', `/api/users/${user.id}`, { enabled: true });
    const role = (await call('POST', '/api/roles', { name: 'everyone', description: 'All', color: '#abcdef' })).body.data;
    await call('PUT', `/api/roles/${role.id}`, { description: 'All of them' });
    await call('POST', `/api/users/${user.id}/roles`, { roleId: role.id });
    // Deleting a held role takes it from its holder: role.unassigned, then role.deleted.
    expect((await call('DELETE', `/api/roles/${role.id}`)).status).toBe(200);
    const app = await call('POST', '/api/applications', { name: 'batch', type: 'm2m', scopes: ['manage:users'] });
    expect(app.status).toBe(201);
    expect((await call('PUT', `/api/applications/${app.body.data.id}`, { name: 'batch v2' })).status).toBe(200);
    const rotated = await call('POST', `/api/applications/${app.body.data.id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    await call('DELETE', `/api/users/${user.id}`);

    const emitted = [...new Set(Object.values(AUDIT_MAPPING).flatMap((rule) => ('webhook' in rule && rule.webhook ? [rule.webhook] : [])))];
    const bodies = () => receiver.requests.filter((r) => r.url.endsWith('?for=every')).map((r) => r.body);
    const arrived = () => bodies().map((body) => JSON.parse(body) as { type: string; data: Record<string, unknown> });
    await vi.waitFor(() => expect(new Set(arrived().map((body) => body.type))).toEqual(new Set(emitted)), WAIT);
    const data = (type: string) => arrived().filter((body) => body.type === type).map((body) => body.data);
    const asUser = { id: user.id, email: 'every@platform.test', firstName: 'Ada', emailVerified: false, createdAt: user.createdAt };
    expect(data('user.created')).toEqual([{ ...asUser, lastName: null, roles: ['user'] }]);
    expect(data('login.succeeded')).toEqual([{ userId: user.id, sessionId: expect.any(String), method: expect.any(String) }]);
    expect(data('login.failed')).toEqual([{ userId: user.id, reason: 'bad_password' }]);
    expect(data('login.mfa_required')).toEqual([{ userId: user.id, method: 'password', amr: ['pwd'], expiresAt: expect.any(String), methods: ['totp', 'recovery_code'] }]);
    expect(bodies().join('\n')).not.toContain(challenged.body.data.mfaToken.split('.')[1]);
    expect(data('user.password_changed')).toEqual([{ ...asUser, lastName: null, roles: ['user'] }]);
    expect(data('user.unblocked')).toEqual([{ ...asUser, lastName: 'Lovelace', roles: ['user'] }]);
    expect(data('role.created')).toEqual([{ ...role, description: 'All' }]);
    expect(data('role.deleted')).toEqual([{ ...role, description: 'All of them' }]);
    expect(data('role.unassigned')).toEqual([{ userId: user.id, roleId: role.id, roleName: 'everyone' }]);
    const { clientSecret: _secret, ...application } = app.body.data;
    expect(data('application.created')).toEqual([
      expect.objectContaining({ applicationId: application.id, clientId: application.clientId, name: 'batch', type: 'm2m', scopes: ['manage:users'] }),
    ]);
    expect(Object.keys(data('application.created')[0]!).sort()).toEqual(
      ['allowedOrigins', 'applicationId', 'clientId', 'grantTypes', 'name', 'postLogoutRedirectUris', 'redirectUris', 'scopes', 'type'],
    );
    expect(data('application.updated')).toEqual([{ applicationId: application.id, name: 'batch v2' }]);
    expect(data('application.secret_rotated')).toEqual([{ applicationId: application.id }]);
    // Neither client secret, nor a hash of one, is ever in a delivery.
    const sent = bodies().join('\n');
    for (const secret of [app.body.data.clientSecret, rotated.body.data.clientSecret]) expect(sent).not.toContain(secret);
    expect(sent).not.toContain('secretHash');
  });

  it('a receiver that never answers holds up neither the writes nor the other subscriptions', async () => {
    await create({ url: `${receiver.url}?for=stuck`, events: ['user.created'] });
    await create({ url: `${receiver.url}?for=prompt`, events: ['user.created'] });
    receiver.answer((request) => (request.url.endsWith('?for=stuck') ? 'hang' : { status: 200 }));
    const emails = ['a', 'b', 'c'].map((name) => `prompt-${name}@platform.test`);
    for (const email of emails) expect((await call('POST', '/api/users', { email, password: 'Passw0rdOk' })).status).toBe(201);
    const prompt = () => receiver.requests.filter((r) => r.url.endsWith('?for=prompt')).map((r) => JSON.parse(r.body).data.email);
    await vi.waitFor(() => expect(prompt()).toEqual(expect.arrayContaining(emails)), WAIT);
    expect(receiver.requests.filter((r) => r.url.endsWith('?for=stuck')).every((r) => r.answered === 0)).toBe(true);
  });

  it("answers 404 to another tenant's admin on every endpoint of a subscription, and lists none of it", async () => {
    const hook = await create();
    const tenant = await call('POST', '/api/tenants', { name: 'acme', adminEmail: 'admin@acme.test', adminPassword: 'Acme-Adm1n' });
    expect(tenant.status).toBe(201);
    const login = await t.request({ method: 'POST', url: '/api/auth/login', tenant: 'acme', body: { email: 'admin@acme.test', password: 'Acme-Adm1n' } });
    const acme = (method: string, url: string, body?: unknown) => call(method, url, body, login.body.data.accessToken, 'acme');
    const [delivery] = await deliveriesOf(hook.id).then(async (log) => (log.length ? log : [(await call('POST', `/api/webhooks/${hook.id}/test`)).body.data]));

    expect((await acme('GET', '/api/webhooks')).body).toEqual({ ok: true, data: [] });
    const endpoints: [string, string, unknown?][] = [
      ['GET', `/api/webhooks/${hook.id}`],
      ['PUT', `/api/webhooks/${hook.id}`, { name: 'mine now' }],
      ['DELETE', `/api/webhooks/${hook.id}`],
      ['POST', `/api/webhooks/${hook.id}/rotate-secret`],
      ['GET', `/api/webhooks/${hook.id}/deliveries`],
      ['POST', `/api/webhooks/${hook.id}/deliveries/${delivery.id}/retry`],
      ['POST', `/api/webhooks/${hook.id}/test`],
    ];
    for (const [method, url, body] of endpoints) expect((await acme(method, url, body)).status, `${method} ${url}`).toBe(404);
    expect((await call('GET', `/api/webhooks/${hook.id}`)).body.data.name).toBe('crm');
  });
});

