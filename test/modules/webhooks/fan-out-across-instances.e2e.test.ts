import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { startHttpsReceiver, type HttpsReceiver } from '../../support/https-receiver.ts';
import { startInstanceBeside } from '../../support/second-instance.ts';
import { PLATFORM, type TestService } from '../../support/service.ts';
import { adminToken, startWebhookService, WAIT } from './webhook-fixtures.ts';

/**
 * Two instances on one database: requests go to A (its relay off), B leads the relay and its
 * consumer groups (webhooks, log streams) fan the events out. B knows its tenants' subscriptions
 * and streams from caches its projections keep current: a batch no target wants costs its consumer
 * groups no statement, and a subscription created through A is found by B for every later event.
 */
describe('consumer groups find their targets in caches across instances', () => {
  let receiver: HttpsReceiver;
  let db: TestDatabase;
  let a: TestService;
  let b: TestService;
  let token: string;
  const statements: string[] = [];
  const CONSUMER_LOOKUP = /\bfrom (inbox|webhooks|log_streams)\b|\binto inbox\b/;

  beforeAll(async () => {
    receiver = await startHttpsReceiver();
    db = await createTestDatabase();
    a = await startWebhookService(receiver, { db, env: { IAM_RELAY_ENABLED: 'false' } });
    b = await startInstanceBeside(a, (text) => statements.push(text), {
      IAM_ALLOW_PRIVATE_NETWORK_TARGETS: 'true',
      IAM_OUTBOUND_CA_FILE: receiver.caFile,
    });
    token = await adminToken(a);
  });
  afterAll(async () => {
    await b?.close();
    await b?.db.pool.end();
    await a?.close();
    await receiver?.close();
    await db?.drop();
  });

  const createUser = async (email: string) => {
    const created = await a.request({ method: 'POST', url: '/api/users', tenant: PLATFORM, token, body: { email, password: 'Passw0rdOk' } });
    expect(created.status).toBe(201);
    return created.body.data.id as string;
  };
  /** Resolves once B's relay has published everything written so far (its consumer groups committed it first). */
  const relayed = async () => {
    const written = await a.store.lastWrittenPosition();
    await vi.waitFor(async () => {
      const { rows } = await db.pool.query<{ position: string }>('select position from relay_checkpoints');
      expect(rows.some((row) => BigInt(row.position) >= written)).toBe(true);
    }, WAIT);
  };

  it('events of a tenant without subscriptions or streams pass the consumer groups without a statement', async () => {
    // The first event of the tenant loads its subscriptions and streams into B's caches.
    await createUser('warm@fan-out.test');
    await relayed();
    const from = statements.length;
    for (let i = 0; i < 3; i += 1) await createUser(`quiet${i}@fan-out.test`);
    await relayed();
    expect(statements.slice(from).filter((text) => CONSUMER_LOOKUP.test(text))).toEqual([]);
  });

  it('a subscription created through the other instance gets the next event', async () => {
    const created = await a.request({ method: 'POST', url: '/api/webhooks', tenant: PLATFORM, token, body: { name: 'crm', url: receiver.url, events: ['user.created'] } });
    expect(created.status).toBe(201);
    const userId = await createUser('seen@fan-out.test');
    await vi.waitFor(() => expect(receiver.requests.map((request) => JSON.parse(request.body).data?.id)).toContain(userId), WAIT);
    await relayed();
    const { rows } = await db.pool.query('select count(*)::int as applied from inbox');
    expect(rows[0].applied).toBe(1);
  });
});
