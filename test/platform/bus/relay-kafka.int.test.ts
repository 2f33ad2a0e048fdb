import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import type { DeliveredMessage } from '../../../src/platform/bus/port.ts';
import { newId } from '../../../src/platform/ids.ts';
import { kafkaBrokers, openKafkaBus, whenKafkaReachable } from '../../support/kafka.ts';
import { PLATFORM, startTestService } from '../../support/service.ts';
import { appendRoundRobin, DELIVERY_TIMEOUT, effects, expectEachAppliedOnceInStreamOrder, newStreams, relayTestBed, uniqueTopic } from './relay-fixtures.ts';

const TOPIC_OPTIONS = { partitions: 3, replicationFactor: 1 };

whenKafkaReachable(() =>
  describe('event relay on a real Kafka broker', () => {
    const bed = relayTestBed(() => openKafkaBus('relay-test'));
    const { startRelay, consume } = bed;

    // `npm run relay` as a process publishes with the service's own catalogue, from the start of
    // this database's log: every event this file appends must be a type of the service.
    const SERVICE_EVENT = 'UserProfileUpdated';

    /** `npm run relay`'s entry point as a real process, so the test can kill it without warning. */
    function spawnRelayProcess(topic: string): { process: ChildProcess; output: () => string } {
      let output = '';
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/relay-main.ts'], {
        env: {
          ...process.env,
          DATABASE_URL: bed.db.url,
          KAFKA_BROKERS: kafkaBrokers.join(','),
          KAFKA_TOPIC: topic,
          KAFKA_TOPIC_PARTITIONS: String(TOPIC_OPTIONS.partitions),
          IAM_RELAY_METRICS_PORT: '0',
          SUBSCRIPTION_POLL_MS: '100',
          LOG_LEVEL: 'warn',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child.stdout!.on('data', (chunk) => (output += chunk));
      child.stderr!.on('data', (chunk) => (output += chunk));
      return { process: child, output: () => output };
    }

    it('relays appended events to the topic; a consumer group applies them once, in order per stream', async () => {
      const topic = uniqueTopic('order');
      await bed.bus.ensureTopic(topic, TOPIC_OPTIONS);
      const { groupId, deliveries } = await consume(topic);
      const streams = newStreams(4);
      startRelay(topic);
      const appended = await appendRoundRobin(bed.store, streams, 25, SERVICE_EVENT);

      await vi.waitFor(async () => expectEachAppliedOnceInStreamOrder(await effects(bed.db.pool, groupId), appended), DELIVERY_TIMEOUT);
      const first = deliveries.find((message) => message.value.id === appended.get(streams[0]!)![0])!;
      expect(first).toMatchObject({ topic, key: streams[0], headers: { 'event-id': first.value.id, 'event-type': SERVICE_EVENT, 'tenant-id': 'acme' } });
      // Each stream sits on one partition (the key), so its order survives the spread over partitions.
      for (const stream of streams) expect(new Set(deliveries.filter((m) => m.key === stream).map((m) => m.partition)).size).toBe(1);
    });

    it('after a relay is killed between publish and checkpoint, the standby publishes again: every event arrives, each applies once', async () => {
      const topic = uniqueTopic('killed');
      await bed.bus.ensureTopic(topic, TOPIC_OPTIONS);
      const { groupId, deliveries } = await consume(topic);
      const streams = newStreams(3);
      const before = await appendRoundRobin(bed.store, streams, 20, SERVICE_EVENT);

      // Locking the checkpoints table lets the relay publish its batch but not record it: the window a
      // crash can hit. A table lock takes no transaction id, so unlike a row lock it does not hold
      // back the event store's visibility bound for the other test files sharing the cluster.
      await bed.db.pool.query('insert into relay_checkpoints (topic) values ($1)', [topic]);
      const holder = await bed.db.pool.connect();
      const killed = spawnRelayProcess(topic);
      try {
        await holder.query('begin');
        await holder.query('lock table relay_checkpoints in share mode');
        await vi.waitFor(async () => expectEachAppliedOnceInStreamOrder(await effects(bed.db.pool, groupId), before), DELIVERY_TIMEOUT).catch((error: unknown) => {
          throw new Error(`${String(error)}\nrelay process output:\n${killed.output()}`);
        });
        const standby = startRelay(topic);
        await new Promise((resolve) => setTimeout(resolve, 500));
        expect(standby.isLeader).toBe(false);

        killed.process.kill('SIGKILL');
        await once(killed.process, 'exit');
        await vi.waitFor(() => expect(standby.isLeader).toBe(true), DELIVERY_TIMEOUT);
        const { rows } = await holder.query('select position from relay_checkpoints where topic = $1', [topic]);
        expect(rows[0].position).toBe('0');
      } finally {
        killed.process.kill('SIGKILL');
        await holder.query('rollback');
        holder.release();
      }

      const after = await appendRoundRobin(bed.store, streams, 10, SERVICE_EVENT);
      const all = new Map(streams.map((stream) => [stream, [...before.get(stream)!, ...after.get(stream)!]]));
      await vi.waitFor(async () => expectEachAppliedOnceInStreamOrder(await effects(bed.db.pool, groupId), all), DELIVERY_TIMEOUT);
      // At-least-once showed itself: the killed relay's batch was delivered again, and had no second effect.
      const firstEvent = before.get(streams[0]!)![0]!;
      expect(deliveries.filter((message) => message.value.id === firstEvent).length).toBeGreaterThanOrEqual(2);
    });

    it('is wired into the service when KAFKA_BROKERS is set: its events reach the topic, password hash stripped', async () => {
      const topic = uniqueTopic('service');
      const t = await startTestService({
        env: {
          KAFKA_BROKERS: kafkaBrokers.join(','),
          KAFKA_TOPIC: topic,
          KAFKA_TOPIC_PARTITIONS: '2',
          IAM_BOOTSTRAP_ADMIN_EMAIL: 'root@p.test',
          IAM_BOOTSTRAP_ADMIN_PASSWORD: 'R00t-Passw0rd!',
        },
      });
      try {
        const received: DeliveredMessage[] = [];
        await t.service.bus.subscribe({ groupId: `group-${newId()}`, topic, fromBeginning: true, handler: async (batch) => void received.push(...batch) });
        await vi.waitFor(() => expect(received.map((m) => m.value.type)).toContain('UserCreated'), DELIVERY_TIMEOUT);
        const userCreated = received.find((m) => m.value.type === 'UserCreated')!;
        expect(userCreated.headers['tenant-id']).toBe(PLATFORM);
        expect(userCreated.value.data).toMatchObject({ email: 'root@p.test' });
        expect(userCreated.value.data).not.toHaveProperty('passwordHash');
      } finally {
        await t.close();
      }
    });
  }),
);
