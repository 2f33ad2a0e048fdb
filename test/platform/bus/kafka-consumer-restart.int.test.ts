import { Kafka, logLevel, PartitionAssigners, type Consumer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { DeliveredMessage } from '../../../src/platform/bus/port.ts';
import type { KafkaEventBus } from '../../../src/platform/bus/kafka.ts';
import { newId } from '../../../src/platform/ids.ts';
import { kafkaBrokers, openKafkaBus, whenKafkaReachable } from '../../support/kafka.ts';
import { eventMessage } from './bus-contract.ts';

const DELIVERY_TIMEOUT = { timeout: 60_000, interval: 100 };

/**
 * A member that joins a group with an assignment protocol no other member offers: while it is in
 * the group, the broker refuses every other member's join with INCONSISTENT_GROUP_PROTOCOL, an
 * error kafkajs does not restart a consumer after.
 */
async function joinWithForeignProtocol(groupId: string, topic: string): Promise<Consumer> {
  const kafka = new Kafka({ clientId: 'foreign-member', brokers: kafkaBrokers, logLevel: logLevel.NOTHING });
  const foreign = kafka.consumer({
    groupId,
    partitionAssigners: [(config) => ({ ...PartitionAssigners.roundRobin(config), name: 'ForeignAssigner' })],
  });
  await foreign.connect();
  await foreign.subscribe({ topics: [topic] });
  // Neither resolves nor commits anything: whatever it fetches stays the group's to consume.
  await foreign.run({ autoCommit: false, eachBatchAutoResolve: false, eachBatch: async () => undefined });
  return foreign;
}

whenKafkaReachable(() =>
  describe('Kafka subscription after a crash kafkajs does not retry', () => {
    let bus: KafkaEventBus;
    beforeAll(async () => {
      bus = await openKafkaBus('consumer-restart-test');
    });
    afterAll(async () => {
      await bus.close();
    });

    it('starts its consumer again, which joins once the group accepts it and receives every event', async () => {
      const topic = `test.bus.restart.${newId()}`;
      const groupId = `test.bus.restart-group.${newId()}`;
      await bus.ensureTopic(topic, { partitions: 1, replicationFactor: 1 });
      const foreign = await joinWithForeignProtocol(groupId, topic);
      const received: DeliveredMessage[] = [];
      await bus.subscribe({ groupId, topic, fromBeginning: true, handler: async (batch) => void received.push(...batch) });
      const published = [eventMessage('thing-acme.restart', 0), eventMessage('thing-acme.restart', 1)];
      await bus.publish(topic, published);

      // The foreign member leaving is what lets the group accept ours again.
      await foreign.disconnect();

      await vi.waitFor(() => expect(received.map((message) => message.value.id)).toEqual(published.map((message) => message.value.id)), DELIVERY_TIMEOUT);
    });
  }),
);
