import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { roleCommands } from '../../../src/modules/roles/commands.ts';
import { systemClock } from '../../../src/platform/clock.ts';
import { systemContext } from '../../../src/platform/commands/context.ts';
import { ReservationNames } from '../../../src/platform/commands/reservation-names.ts';
import { PostgresEventStore } from '../../../src/platform/eventstore/postgres.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { startHttpsReceiver, type HttpsReceiver } from '../../support/https-receiver.ts';
import { PLATFORM } from '../../support/service.ts';
import { adminToken, startWebhookService, verifiesWith, WAIT } from './webhook-fixtures.ts';

/**
 * Webhook retries across a service killed with SIGKILL, the same tests for the in-process bus and
 * for Kafka (`env` names the broker and a topic of the test's own; `testTimeoutMs` leaves Kafka the
 * time to drop the killed member from its consumer groups, its session timeout, before the next
 * start joins them).
 */
export function killedServiceSuite(env: () => Record<string, string>, testTimeoutMs?: number): void {
  let receiver: HttpsReceiver;
  let db: TestDatabase;
  beforeAll(async () => {
    receiver = await startHttpsReceiver();
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await receiver.close();
    await db.drop();
  });

  const deliveryOf = async (webhookId: string) =>
    (await db.pool.query('select status, attempts from outbound_deliveries where target_id = $1', [webhookId])).rows[0] as { status: string; attempts: number } | undefined;

  /** `npm start` as a real process on the test's database; its output is kept for failure messages. */
  function startService(retrySchedule: string) {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      env: {
        ...process.env,
        DATABASE_URL: db.url,
        IAM_MASTER_KEY: 'test-master-key',
        IAM_BOOTSTRAP_TENANT: PLATFORM,
        PORT: '0',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
        SUBSCRIPTION_POLL_MS: '200',
        IAM_ALLOW_PRIVATE_NETWORK_TARGETS: 'true',
        IAM_OUTBOUND_CA_FILE: receiver.caFile,
        IAM_WEBHOOK_RETRY_SCHEDULE: retrySchedule,
        KAFKA_BROKERS: '',
        ...env(),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (chunk) => (output += chunk));
    child.stderr!.on('data', (chunk) => (output += chunk));
    return { child, output: () => output };
  }

  async function subscribe(events: string[]): Promise<{ id: string; signingSecret: string }> {
    const first = await startWebhookService(receiver, { db, env: env() });
    const created = await first.request({ method: 'POST', url: '/api/webhooks', tenant: PLATFORM, token: await adminToken(first), body: { name: 'crm', url: receiver.url, events } });
    expect(created.status).toBe(201);
    await first.close();
    return created.body.data;
  }

  /** A new start of the service with the receiver answering 204, until the webhook's delivery is delivered at attempt `attempts`. */
  async function restartUntilDelivered(webhookId: string, attempts: number): Promise<void> {
    receiver.answer({ status: 204 });
    const second = await startWebhookService(receiver, { db, env: env() });
    try {
      await vi.waitFor(async () => expect(await deliveryOf(webhookId)).toEqual({ status: 'delivered', attempts }), WAIT);
    } finally {
      await second.close();
    }
  }

  const createRole = async (store: PostgresEventStore, name: string) =>
    roleCommands({ store, clock: systemClock, reservationNames: new ReservationNames('test-master-key') }).create(PLATFORM, { name, description: '', color: '#000000', permissions: [] }, systemContext(PLATFORM));

  it('a retry pending when the process is killed with SIGKILL happens after the next start, with the same event', async () => {
    const webhook = await subscribe(['role.created']);
    // Long enough that the killed process cannot make the retry itself.
    const { child, output } = startService('8s');
    receiver.answer({ status: 503 });
    const store = new PostgresEventStore(db.pool, { pollIntervalMs: 200 });
    try {
      await createRole(store, 'auditors');
      await vi.waitFor(async () => expect(await deliveryOf(webhook.id)).toEqual({ status: 'retrying', attempts: 1 }), WAIT).catch((error: unknown) => {
        throw new Error(`${String(error)}\nservice output:\n${output()}`);
      });
    } finally {
      child.kill('SIGKILL');
      await once(child, 'exit');
      await store.close();
    }

    await restartUntilDelivered(webhook.id, 2);
    const received = receiver.requests.filter((request) => JSON.parse(request.body).type === 'role.created');
    expect(received.map((request) => request.answered)).toEqual([503, 204]);
    expect(received[1]!.body).toBe(received[0]!.body);
    expect(verifiesWith(webhook.signingSecret, received[1]!)).toBe(true);
  }, testTimeoutMs);

  it('a delivery the consumer is still waiting on when the process is killed is sent again after the next start, with the same event', async () => {
    const webhook = await subscribe(['role.updated']);
    const { child, output } = startService('8s');
    // The consumer's first attempt gets no answer: it is in the consumer's wait when the process dies.
    receiver.answer('hang');
    const store = new PostgresEventStore(db.pool, { pollIntervalMs: 200 });
    const updated = () => receiver.requests.filter((request) => JSON.parse(request.body).type === 'role.updated');
    try {
      const role = await createRole(store, 'reviewers');
      await roleCommands({ store, clock: systemClock, reservationNames: new ReservationNames('test-master-key') }).update(PLATFORM, role.roleId, { description: 'Reviews' }, systemContext(PLATFORM));
      await vi.waitFor(() => expect(updated()).toHaveLength(1), WAIT).catch((error: unknown) => {
        throw new Error(`${String(error)}\nservice output:\n${output()}`);
      });
    } finally {
      child.kill('SIGKILL');
      await once(child, 'exit');
      await store.close();
    }
    expect(await deliveryOf(webhook.id)).toBeUndefined();

    await restartUntilDelivered(webhook.id, 1);
    const [lost, again] = updated();
    expect(again!.answered).toBe(204);
    expect(again!.body).toBe(lost!.body);
    expect(verifiesWith(webhook.signingSecret, again!)).toBe(true);
  }, testTimeoutMs);
}
