import { describe, expect, it, vi } from 'vitest';
import { registerRelayMetrics } from '../../../src/platform/bus/bus-metrics.ts';
import { InProcessEventBus } from '../../../src/platform/bus/in-process.ts';
import type { DeliveredMessage } from '../../../src/platform/bus/port.ts';
import { readRelayCheckpoint } from '../../../src/platform/bus/relay-checkpoints.ts';
import { newId } from '../../../src/platform/ids.ts';
import { createMetrics } from '../../../src/platform/metrics.ts';
import { PLATFORM, startTestService } from '../../support/service.ts';
import { testEvent } from '../eventstore/event-store-contract.ts';
import { appendRoundRobin, DELIVERY_TIMEOUT, effects, expectEachAppliedOnceInStreamOrder, logger, newStreams, relayTestBed, uniqueTopic } from './relay-fixtures.ts';
import { watchSessionStatements } from '../../support/session-statements.ts';

const TOPIC_OPTIONS = { partitions: 1, replicationFactor: 1 };

describe('event relay on the in-process bus', () => {
  const bed = relayTestBed(async () => new InProcessEventBus(logger));
  const { startRelay } = bed;

  async function record(topic: string): Promise<DeliveredMessage[]> {
    const received: DeliveredMessage[] = [];
    await bed.bus.subscribe({ groupId: `group-${newId()}`, topic, fromBeginning: true, handler: async (batch) => void received.push(...batch) });
    return received;
  }

  const idsOf = (messages: DeliveredMessage[], stream: string) => messages.filter((m) => m.key === stream).map((m) => m.value.id);

  it('publishes each committed event keyed by its stream, in order, with headers and without sensitive fields', async () => {
    const topic = uniqueTopic('envelope');
    await bed.bus.ensureTopic(topic, TOPIC_OPTIONS);
    const received = await record(topic);
    const user = `user-acme.${newId()}`;
    const session = `session-acme.${newId()}`;
    const created = testEvent('UserCreated', {
      userId: 'u1',
      email: 'ada@acme.test',
      passwordHash: '$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA',
      roles: [{ id: 'r1', name: 'admin' }],
      credentials: [{ label: 'phone', secretHash: 'digest', sealedSeed: 'sealed' }],
    });
    const started = testEvent('SessionStarted', { sessionId: 's1', userId: 'u1', refreshTokenHash: 'digest', acr: 'aal1' });
    const renamed = testEvent('UserProfileUpdated', { userId: 'u1', firstName: 'Ada' });
    await bed.store.append(user, [created]);
    await bed.store.append(session, [started]);
    const { position: last } = await bed.store.append(user, [renamed]);
    startRelay(topic);

    await vi.waitFor(() => expect(received.filter((m) => [user, session].includes(m.key))).toHaveLength(3), DELIVERY_TIMEOUT);
    expect(idsOf(received, user)).toEqual([created.id, renamed.id]);
    const [first] = received.filter((m) => m.key === user);
    expect(first!.headers).toEqual({ 'content-type': 'application/json', 'event-id': created.id, 'event-type': 'UserCreated', 'tenant-id': 'acme' });
    expect(first!.value).toEqual({
      version: 1,
      id: created.id,
      type: 'UserCreated',
      tenantId: 'acme',
      streamId: user,
      revision: '0',
      position: expect.stringMatching(/^\d+$/),
      occurredAt: created.metadata.occurredAt,
      data: { userId: 'u1', email: 'ada@acme.test', roles: [{ id: 'r1', name: 'admin' }], credentials: [{ label: 'phone' }] },
      metadata: created.metadata,
    });
    expect(received.find((m) => m.key === session)!.value.data).toEqual({ sessionId: 's1', userId: 'u1', acr: 'aal1' });
    await vi.waitFor(async () => expect(await readRelayCheckpoint(bed.db.pool, topic)).toBeGreaterThanOrEqual(last), DELIVERY_TIMEOUT);
  });

  it('advances its checkpoint only after the bus accepted the batch, and counts refusals', async () => {
    const topic = uniqueTopic('refused');
    const metrics = createMetrics();
    // The topic does not exist yet: the bus refuses every publish until it is created.
    startRelay(topic, { metrics: registerRelayMetrics(metrics, bed.db.pool, bed.store, topic) });
    const stream = `thing-acme.${newId()}`;
    const { position } = await bed.store.append(stream, [testEvent()]);
    const metric = async (name: string) => (await metrics.registry.getSingleMetric(name)!.get()).values[0]!.value;

    await vi.waitFor(async () => expect(await metric('iam_relay_publish_errors_total')).toBeGreaterThanOrEqual(2), DELIVERY_TIMEOUT);
    expect(await readRelayCheckpoint(bed.db.pool, topic)).toBe(0n);
    expect(await metric('iam_relay_lag_events')).toBeGreaterThan(0);
    expect(await metric('iam_relay_leader')).toBe(1);

    await bed.bus.ensureTopic(topic, TOPIC_OPTIONS);
    await vi.waitFor(async () => expect(await readRelayCheckpoint(bed.db.pool, topic)).toBeGreaterThanOrEqual(position), DELIVERY_TIMEOUT);
    expect(await metric('iam_relay_lag_events')).toBe(0);
  });

  it('proves its lock with one statement a batch, which also saves the checkpoint of the batch before; the last one is saved shortly after', async () => {
    const topic = uniqueTopic('one-statement');
    await bed.bus.ensureTopic(topic, TOPIC_OPTIONS);
    const received = await record(topic);
    const relay = startRelay(topic);
    await vi.waitFor(() => expect(relay.isLeader).toBe(true), DELIVERY_TIMEOUT);
    // A first event relayed and checkpointed: the leader's start-up statements lie behind us.
    const warmUp = (await bed.store.append(`thing-acme.${newId()}`, [testEvent()])).position;
    await vi.waitFor(async () => expect(await readRelayCheckpoint(bed.db.pool, topic)).toBe(warmUp), DELIVERY_TIMEOUT);
    // Observed: the statements of the leader's own session.
    const { sent, stop } = watchSessionStatements(`iam-leader:relay:${topic}`);
    try {
      const stream = `thing-acme.${newId()}`;
      let last = 0n;
      for (let batch = 1; batch <= 3; batch += 1) {
        last = (await bed.store.append(stream, [testEvent()])).position;
        await vi.waitFor(() => expect(received.filter((message) => message.key === stream)).toHaveLength(batch), DELIVERY_TIMEOUT);
      }
      await vi.waitFor(async () => expect(await readRelayCheckpoint(bed.db.pool, topic)).toBe(last), DELIVERY_TIMEOUT);
      // Three batches, each published after one statement (the first proves the lock, the next two
      // also save their predecessor), then the last batch's checkpoint on its own.
      expect(sent.filter((text) => text !== 'select 1' && !text.startsWith('update relay_checkpoints'))).toEqual([]);
      expect(sent.length).toBeLessThanOrEqual(4);
    } finally {
      stop();
    }
  });

  it('resumes from its checkpoint after a restart: nothing relayed twice, nothing skipped', async () => {
    const topic = uniqueTopic('resume');
    await bed.bus.ensureTopic(topic, TOPIC_OPTIONS);
    const received = await record(topic);
    const [stream] = newStreams(1);
    const before = await appendRoundRobin(bed.store, [stream!], 3);
    const first = startRelay(topic);
    await vi.waitFor(() => expect(idsOf(received, stream!)).toEqual(before.get(stream!)), DELIVERY_TIMEOUT);
    await first.stop();

    const after = await appendRoundRobin(bed.store, [stream!], 2);
    startRelay(topic);
    const expected = [...before.get(stream!)!, ...after.get(stream!)!];
    await vi.waitFor(() => expect(idsOf(received, stream!)).toEqual(expected), DELIVERY_TIMEOUT);
  });

  it('lets one relay lead; a standby takes over when the leader session dies, and every event arrives', async () => {
    const topic = uniqueTopic('leader');
    await bed.bus.ensureTopic(topic, TOPIC_OPTIONS);
    const { groupId } = await bed.consume(topic);
    const streams = newStreams(2);
    const pair = [startRelay(topic), startRelay(topic)];
    const before = await appendRoundRobin(bed.store, streams, 5);
    await vi.waitFor(async () => expectEachAppliedOnceInStreamOrder(await effects(bed.db.pool, groupId), before), DELIVERY_TIMEOUT);
    expect(pair.filter((relay) => relay.isLeader)).toHaveLength(1);
    const leader = pair.find((relay) => relay.isLeader)!;

    // The leader's database session dies (as when its process is killed): its lock is released.
    const { rowCount } = await bed.db.pool.query(
      `select pg_terminate_backend(pid) from pg_stat_activity
        where datname = current_database() and application_name like 'iam-leader:%'
          and pid in (select pid from pg_locks where locktype = 'advisory' and granted)`,
    );
    expect(rowCount).toBe(1);
    const after = await appendRoundRobin(bed.store, streams, 5);

    const all = new Map(streams.map((stream) => [stream, [...before.get(stream)!, ...after.get(stream)!]]));
    await vi.waitFor(async () => expectEachAppliedOnceInStreamOrder(await effects(bed.db.pool, groupId), all), DELIVERY_TIMEOUT);
    await vi.waitFor(() => expect(pair.filter((relay) => relay.isLeader)).toHaveLength(1), DELIVERY_TIMEOUT);
    expect(pair.find((relay) => relay.isLeader)).not.toBe(leader);
  });

  it('is wired into the service by default: its own events reach a consumer of the service bus, password hash stripped', async () => {
    const t = await startTestService({ env: { IAM_BOOTSTRAP_ADMIN_EMAIL: 'root@p.test', IAM_BOOTSTRAP_ADMIN_PASSWORD: 'R00t-Passw0rd!' } });
    try {
      expect(t.service.bus).toBeInstanceOf(InProcessEventBus);
      const received: DeliveredMessage[] = [];
      await t.service.bus.subscribe({ groupId: 'test', topic: 'iam.events', fromBeginning: true, handler: async (batch) => void received.push(...batch) });
      await vi.waitFor(() => expect(received.map((m) => m.value.type)).toContain('UserCreated'), DELIVERY_TIMEOUT);
      const userCreated = received.find((m) => m.value.type === 'UserCreated')!;
      expect(userCreated.headers['tenant-id']).toBe(PLATFORM);
      expect(userCreated.value.data).toMatchObject({ email: 'root@p.test' });
      expect(userCreated.value.data).not.toHaveProperty('passwordHash');

      await vi.waitFor(async () => {
        const { body } = await t.request({ method: 'GET', url: '/metrics' });
        expect(body).toContain('iam_bus_consumer_lag_messages{group="test",topic="iam.events"} 0');
        expect(body).toContain('iam_relay_lag_events{topic="iam.events"} 0');
        expect(body).toContain('iam_relay_leader{topic="iam.events"} 1');
      }, DELIVERY_TIMEOUT);
    } finally {
      await t.close();
    }
  });
});
