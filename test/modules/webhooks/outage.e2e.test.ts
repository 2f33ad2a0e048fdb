import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startHttpsReceiver, type HttpsReceiver } from '../../support/https-receiver.ts';
import { PLATFORM, type TestService } from '../../support/service.ts';
import { adminToken, startWebhookService, WAIT } from './webhook-fixtures.ts';

/** A receiver outage: with retries an hour apart, what waits must go out as soon as the receiver answers again. */
describe('webhook deliveries across a receiver outage', () => {
  let receiver: HttpsReceiver;
  let t: TestService;
  let token: string;
  const call = (method: string, url: string, body?: unknown) => t.request({ method, url, body, token, tenant: PLATFORM });
  const deliveriesOf = async (webhookId: string) => (await call('GET', `/api/webhooks/${webhookId}/deliveries?limit=100`)).body.data.data as { eventId: string; status: string; attempt: number; error: string | null; nextAttemptAt: string | null }[];
  const subscribe = async (path: string) => {
    const created = await call('POST', '/api/webhooks', { name: path, url: `${receiver.url}?for=${path}`, events: ['user.created'] });
    expect(created.status).toBe(201);
    return created.body.data.id as string;
  };
  let users = 0;
  const createUser = async () => expect((await call('POST', '/api/users', { email: `user-${++users}@platform.test`, password: 'Passw0rdOk' })).status).toBe(201);

  beforeAll(async () => {
    receiver = await startHttpsReceiver();
    t = await startWebhookService(receiver, { env: { IAM_WEBHOOK_RETRY_SCHEDULE: '1h,1h' } });
    token = await adminToken(t);
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  it('keeps a subscription active through more than 10 failed attempts, and sends its waiting retries at once when the receiver answers again, each event once', async () => {
    const hook = await subscribe('outage');
    await receiver.goDown();
    for (let i = 0; i < 12; i++) await createUser();
    await vi.waitFor(async () => expect((await deliveriesOf(hook)).filter((d) => d.status === 'retrying' && d.attempt === 1)).toHaveLength(12), WAIT);
    // 12 refused attempts: no delivery has used up its retries, so nothing counts towards deactivation.
    expect((await call('GET', `/api/webhooks/${hook}`)).body.data.isActive).toBe(true);

    await receiver.comeUp();
    receiver.answer({ status: 200 });
    await createUser();
    // Their retries were due in an hour: they arrive now because the receiver answered again.
    await vi.waitFor(async () => expect((await deliveriesOf(hook)).filter((d) => d.status === 'delivered')).toHaveLength(13), WAIT);
    const arrived = receiver.requests.filter((request) => request.url.endsWith('?for=outage')).map((request) => JSON.parse(request.body).id as string);
    expect(arrived).toHaveLength(13);
    expect(new Set(arrived)).toEqual(new Set((await deliveriesOf(hook)).map((d) => d.eventId)));
    expect((await deliveriesOf(hook)).filter((d) => d.attempt === 2)).toHaveLength(12);
  });

  it('drops the waiting deliveries of a subscription that is deactivated, all at once, and sends them no more', async () => {
    const hook = await subscribe('stopped');
    await receiver.goDown();
    for (let i = 0; i < 3; i++) await createUser();
    await vi.waitFor(async () => expect((await deliveriesOf(hook)).filter((d) => d.status === 'retrying')).toHaveLength(3), WAIT);

    expect((await call('PUT', `/api/webhooks/${hook}`, { isActive: false })).status).toBe(200);
    const dropped = await deliveriesOf(hook);
    expect(dropped.map((d) => [d.status, d.nextAttemptAt, d.error])).toEqual(Array(3).fill(['failed', null, 'the subscription was deactivated']));
    const { rows } = await t.db.pool.query("select count(*)::int as n from outbound_deliveries where target_id = $1 and next_attempt_at is not null", [hook]);
    expect(rows[0].n).toBe(0);
  });
});
