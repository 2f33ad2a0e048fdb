import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { DeliveredMessage } from '../../../src/platform/bus/port.ts';
import type { KafkaEventBus } from '../../../src/platform/bus/kafka.ts';
import { newId } from '../../../src/platform/ids.ts';
import { kafkaBrokers, openKafkaBus, whenKafkaReachable } from '../../support/kafka.ts';
import { eventMessage } from './bus-contract.ts';

const MEMBER = fileURLToPath(new URL('./kafka-member-process.ts', import.meta.url));

whenKafkaReachable(() =>
  describe('a Kafka consumer group whose member is killed while it handles a batch', () => {
    let bus: KafkaEventBus;
    beforeAll(async () => {
      bus = await openKafkaBus('killed-member-test');
    });
    afterAll(async () => {
      await bus.close();
    });

    // The outbound engine's groups start at the topic's end (fromBeginning false): before, that start
    // lived only in the killed member's memory, and the next member started at the end again.
    it("hands the partition's first batch to the next member, though the group had never committed on that partition", async () => {
      const topic = `test.bus.killed-member.${newId()}`;
      const groupId = `${topic}.group`;
      await bus.ensureTopic(topic, { partitions: 1, replicationFactor: 1 });
      const member = spawn(process.execPath, ['--import', 'tsx', MEMBER], {
        env: { ...process.env, KAFKA_BROKERS: kafkaBrokers.join(','), TOPIC: topic, GROUP: groupId },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      member.stdout!.on('data', (chunk) => (output += chunk));
      member.stderr!.on('data', (chunk) => (output += chunk));
      const message = eventMessage('thing-acme.killed-member', 0);
      try {
        await vi.waitFor(() => expect(output).toContain('joined'), { timeout: 30_000, interval: 100 });
        await bus.publish(topic, [message]);
        await vi.waitFor(() => expect(output).toContain(`handling ${message.value.id}`), { timeout: 30_000, interval: 100 });
      } finally {
        member.kill('SIGKILL');
        await once(member, 'exit');
      }

      // The next member joins once the broker has dropped the killed one (its session timeout).
      const received: DeliveredMessage[] = [];
      const subscription = await bus.subscribe({ groupId, topic, fromBeginning: false, handler: async (messages) => void received.push(...messages) });
      try {
        await vi.waitFor(() => expect(received.map((delivered) => delivered.value.id)).toEqual([message.value.id]), { timeout: 30_000, interval: 100 });
      } finally {
        await subscription.close();
      }
    }, 120_000);
  }),
);
