import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { systemClock } from '../../../src/platform/clock.ts';
import { systemContext } from '../../../src/platform/commands/context.ts';
import { toNewEvents } from '../../../src/platform/commands/handle-command.ts';
import { newId } from '../../../src/platform/ids.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { startHttpsReceiver, type HttpsReceiver } from '../../support/https-receiver.ts';
import { PLATFORM, type TestService } from '../../support/service.ts';
import { adminToken, startWebhookService, verifiesWith, WAIT } from './webhook-fixtures.ts';

/**
 * Delivery through the service's bus, the same tests for the in-process bus and for Kafka (`env`
 * names the broker and a topic of the test's own).
 */
export function webhookDeliverySuite(env: () => Record<string, string>): void {
  let receiver: HttpsReceiver;
  let db: TestDatabase;
  let t: TestService;
  let token: string;
  const call = (method: string, url: string, body?: unknown) => t.request({ method, url, body, token, tenant: PLATFORM });
  const deliveriesOf = async (webhookId: string) => (await call('GET', `/api/webhooks/${webhookId}/deliveries`)).body.data.data;

  beforeAll(async () => {
    receiver = await startHttpsReceiver();
    db = await createTestDatabase();
    t = await startWebhookService(receiver, { db, env: env() });
    token = await adminToken(t);
  });
  // A start that failed (no broker) leaves some of these unset: the rest are still released.
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
    await db?.drop();
  });

  async function subscribe(events: string[]): Promise<{ id: string; signingSecret: string }> {
    const created = await call('POST', '/api/webhooks', { name: `hook ${events.join(' ')}`, url: receiver.url, events });
    expect(created.status).toBe(201);
    return created.body.data;
  }

  it('a receiver down, then answering 500, then 200 gets the event once per attempt with the same id, each signature valid', async () => {
    const webhook = await subscribe(['user.created']);
    await receiver.goDown();
    const user = await call('POST', '/api/users', { email: 'first@platform.test', password: 'Passw0rdOk', firstName: 'Ada' });
    expect(user.status).toBe(201);

    await vi.waitFor(async () => expect((await deliveriesOf(webhook.id))[0]).toMatchObject({ status: 'retrying', responseStatus: null }), WAIT);
    receiver.answer({ status: 500, body: 'busy' });
    await receiver.comeUp();
    await vi.waitFor(async () => expect((await deliveriesOf(webhook.id))[0]).toMatchObject({ status: 'retrying', responseStatus: 500, responseBody: 'busy' }), WAIT);
    receiver.answer({ status: 200, body: 'thanks' });
    await vi.waitFor(async () => expect((await deliveriesOf(webhook.id))[0]).toMatchObject({ status: 'delivered', responseStatus: 200 }), WAIT);

    // Every attempt is recorded: those that found no receiver, then one request per attempt.
    const [delivery] = await deliveriesOf(webhook.id);
    const { rows: attempts } = await db.pool.query('select response_status from outbound_attempts where delivery_id = $1 order by attempt', [delivery.id]);
    const unanswered = attempts.filter((attempt) => attempt.response_status === null).length;
    expect(unanswered).toBeGreaterThanOrEqual(1);
    const received = receiver.requests.filter((request) => JSON.parse(request.body).data?.id === user.body.data.id);
    expect(delivery.attempt).toBe(attempts.length);
    expect(received.length).toBe(attempts.length - unanswered);
    expect(received.at(-1)!.answered).toBe(200);
    expect(received.slice(0, -1).map((request) => request.answered)).toEqual(received.slice(0, -1).map(() => 500));
    expect(received.length).toBeGreaterThanOrEqual(2);
    const bodies = received.map((request) => JSON.parse(request.body));
    expect(new Set(bodies.map((body) => body.id)).size).toBe(1);
    expect(bodies[0]).toEqual({
      id: expect.any(String),
      type: 'user.created',
      timestamp: expect.any(String),
      data: {
        id: user.body.data.id,
        email: 'first@platform.test',
        firstName: 'Ada',
        lastName: null,
        emailVerified: false,
        roles: ['user'],
        createdAt: bodies[0].timestamp,
      },
    });
    const { rows } = await db.pool.query("select event_id from events where type = 'UserCreated' and data->>'userId' = $1", [user.body.data.id]);
    expect(bodies[0].id).toBe(rows[0].event_id);
    for (const request of received) expect(verifiesWith(webhook.signingSecret, request)).toBe(true);
    expect(received[0]!.headers['content-type']).toBe('application/json');
  });

  it('loses nothing across a restart: a retry pending when the service stops happens after the next start', async () => {
    const webhook = await subscribe(['role.created']);
    receiver.answer({ status: 503 });
    const role = await call('POST', '/api/roles', { name: 'auditors', permissions: ['view:audit'] });
    expect(role.status).toBe(201);
    await vi.waitFor(async () => expect((await deliveriesOf(webhook.id))[0]).toMatchObject({ status: 'retrying', responseStatus: 503 }), WAIT);

    await t.close();
    const beforeRestart = receiver.requests.filter((request) => JSON.parse(request.body).type === 'role.created');
    receiver.answer({ status: 204 });
    t = await startWebhookService(receiver, { db, env: env() });
    token = await adminToken(t);

    await vi.waitFor(async () => expect((await deliveriesOf(webhook.id))[0]).toMatchObject({ status: 'delivered', responseStatus: 204 }), WAIT);
    const received = receiver.requests.filter((request) => JSON.parse(request.body).type === 'role.created');
    expect(beforeRestart.map((request) => request.answered)).toEqual(beforeRestart.map(() => 503));
    // The retry came from the new instance: one more request, the same event.
    expect(received.length).toBe(beforeRestart.length + 1);
    expect(received.at(-1)!.answered).toBe(204);
    expect((await deliveriesOf(webhook.id))[0].attempt).toBe(received.length);
    expect(JSON.parse(received.at(-1)!.body)).toEqual(JSON.parse(received[0]!.body));
    expect(JSON.parse(received.at(-1)!.body).data).toMatchObject({ id: role.body.data.id, name: 'auditors', permissions: ['view:audit'] });
    expect(verifiesWith(webhook.signingSecret, received.at(-1)!)).toBe(true);
  });

  it('a burst of deliveries bigger than the chunks the consumer sends and commits them in reaches each subscription once, signed', async () => {
    receiver.answer({ status: 204 });
    const hooks: { id: string; signingSecret: string }[] = [];
    for (let i = 0; i < 10; i++) {
      const created = await call('POST', '/api/webhooks', { name: `burst ${i}`, url: `${receiver.url}?burst=${i}`, events: ['login.failed'] });
      expect(created.status).toBe(201);
      hooks.push(created.body.data);
    }
    // One append: the relay reads the 120 events at once, so one bus batch holds 1,200 deliveries (several chunks).
    const failures = Array.from({ length: 120 }, () => ({ type: 'LoginFailed', data: { userId: null, reason: 'bad_password' } }));
    const appended = toNewEvents(failures, systemContext(PLATFORM), systemClock);
    await t.events.append(`loginattempt-${PLATFORM}.${newId()}`, appended);
    const burst = () => receiver.requests.filter((request) => request.url.includes('burst='));
    await vi.waitFor(() => expect(burst().length).toBeGreaterThanOrEqual(1_200), WAIT);

    const eventIds = new Set(appended.map((event) => event.id));
    const arrivals = burst().map((request) => `${JSON.parse(request.body).id} ${request.url}`);
    expect(new Set(arrivals).size).toBe(arrivals.length);
    expect(arrivals).toHaveLength(1_200);
    expect(new Set(burst().map((request) => JSON.parse(request.body).id))).toEqual(eventIds);
    for (const request of burst()) expect(verifiesWith(hooks[Number(request.url.split('burst=')[1])]!.signingSecret, request)).toBe(true);
    // The receiver answers before the chunk commits: the records follow.
    const delivered = async () =>
      (await db.pool.query("select count(*)::int as n from outbound_deliveries where status = 'delivered' and target_id = any($1)", [hooks.map((hook) => hook.id)])).rows[0].n;
    await vi.waitFor(async () => expect(await delivered()).toBe(1_200), WAIT);
  });
}
