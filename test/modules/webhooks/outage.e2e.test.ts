import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startHttpsReceiver, type HttpsReceiver } from '../../support/https-receiver.ts';
import { PLATFORM, type TestService } from '../../support/service.ts';
import { adminToken, startWebhookService, WAIT } from './webhook-fixtures.ts';

/**
 * A receiver outage: with retries an hour apart, what waits must go out as soon as the receiver
 * answers again; meanwhile the subscription's new deliveries wait without an attempt each, and one
 * of them probes the receiver every 2 seconds.
 */
describe('webhook deliveries across a receiver outage', () => {
  let receiver: HttpsReceiver;
  let t: TestService;
  let token: string;
  const call = (method: string, url: string, body?: unknown) => t.request({ method, url, body, token, tenant: PLATFORM });
  const deliveriesOf = async (webhookId: string) => (await call('GET', `/api/webhooks/${webhookId}/deliveries?limit=100`)).body.data.data as { id: string; eventId: string; status: string; attempt: number; error: string | null; nextAttemptAt: string | null }[];
  const subscribe = async (path: string) => {
    const created = await call('POST', '/api/webhooks', { name: path, url: `${receiver.url}?for=${path}`, events: ['user.created'] });
    expect(created.status).toBe(201);
    return created.body.data.id as string;
  };
  let users = 0;
  const createUser = async () => expect((await call('POST', '/api/users', { email: `user-${++users}@platform.test`, password: 'Passw0rdOk' })).status).toBe(201);

  beforeAll(async () => {
    receiver = await startHttpsReceiver();
    t = await startWebhookService(receiver, { env: { IAM_WEBHOOK_RETRY_SCHEDULE: '1h,1h', IAM_OUTBOUND_PROBE_INTERVAL_MS: '2000' } });
    token = await adminToken(t);
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  it('holds the deliveries of a failing subscription without an attempt each, probes it, and sends everything waiting at once when it answers again, each event once', async () => {
    const hook = await subscribe('outage');
    await receiver.goDown();
    for (let i = 0; i < 12; i++) await createUser();
    await vi.waitFor(async () => expect(await deliveriesOf(hook)).toHaveLength(12), WAIT);
    await vi.waitFor(async () => expect((await deliveriesOf(hook)).filter((d) => d.status === 'retrying').length).toBeGreaterThanOrEqual(2), WAIT);
    const duringOutage = await deliveriesOf(hook);
    // The first failure opened the circuit: the rest wait unattempted (no time of their own), and
    // the retrying ones are the first attempts and the probes since, not one attempt per delivery.
    const held = duringOutage.filter((d) => d.status === 'pending');
    const attempted = duringOutage.filter((d) => d.status === 'retrying');
    expect(held.length).toBeGreaterThan(0);
    expect(held.map((d) => [d.attempt, d.nextAttemptAt, d.error])).toEqual(held.map(() => [0, null, null]));
    expect(attempted.map((d) => d.attempt)).toEqual(attempted.map(() => 1));
    expect(held.length + attempted.length).toBe(12);
    const { rows: refused } = await t.db.pool.query('select count(*)::int as n from outbound_attempts a join outbound_deliveries d on d.id = a.delivery_id where d.target_id = $1', [hook]);
    expect(refused[0].n).toBeLessThan(12);
    // No delivery has used up its retries, so nothing counts towards deactivation.
    expect((await call('GET', `/api/webhooks/${hook}`)).body.data.isActive).toBe(true);

    await receiver.comeUp();
    receiver.answer({ status: 200 });
    await createUser();
    // The retries were due in an hour and the held ones had no time: they arrive now because a
    // probe (or the new event) got through.
    await vi.waitFor(async () => expect((await deliveriesOf(hook)).filter((d) => d.status === 'delivered')).toHaveLength(13), WAIT);
    const arrived = receiver.requests.filter((request) => request.url.endsWith('?for=outage')).map((request) => JSON.parse(request.body).id as string);
    expect(arrived).toHaveLength(13);
    expect(new Set(arrived)).toEqual(new Set((await deliveriesOf(hook)).map((d) => d.eventId)));
    // Refused ones needed their retry; held ones went out at their first attempt (unless a probe refused them before).
    const after = new Map((await deliveriesOf(hook)).map((d) => [d.id, d.attempt]));
    expect(attempted.map((d) => after.get(d.id))).toEqual(attempted.map(() => 2));
    expect(held.map((d) => after.get(d.id))).toContain(1);
  });

  it('drops the waiting deliveries of a subscription that is deactivated, all at once, and sends them no more', async () => {
    const hook = await subscribe('stopped');
    await receiver.goDown();
    for (let i = 0; i < 3; i++) await createUser();
    // The first attempted and refused, the others held by the open circuit (or probes by now).
    await vi.waitFor(async () => expect((await deliveriesOf(hook)).filter((d) => d.status === 'retrying' || d.status === 'pending')).toHaveLength(3), WAIT);
    await vi.waitFor(async () => expect((await deliveriesOf(hook)).filter((d) => d.status === 'retrying').length).toBeGreaterThan(0), WAIT);

    expect((await call('PUT', `/api/webhooks/${hook}`, { isActive: false })).status).toBe(200);
    const dropped = await deliveriesOf(hook);
    expect(dropped.map((d) => [d.status, d.nextAttemptAt, d.error])).toEqual(Array(3).fill(['failed', null, 'the subscription was deactivated']));
    const { rows } = await t.db.pool.query("select count(*)::int as n from outbound_deliveries where target_id = $1 and next_attempt_at is not null", [hook]);
    expect(rows[0].n).toBe(0);
  });
});
