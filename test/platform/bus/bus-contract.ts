import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { deduplicatingHandler } from '../../../src/platform/bus/deduplicating-consumer.ts';
import { InMemoryInbox } from '../../../src/platform/bus/in-memory-inbox.ts';
import type { DeliveredMessage, EventBus, OutgoingMessage, Subscription } from '../../../src/platform/bus/port.ts';
import { newId } from '../../../src/platform/ids.ts';

// Generous: a real broker needs a group join (and sometimes a rebalance) before the first delivery.
const DELIVERY_TIMEOUT = { timeout: 30_000, interval: 50 };

/** Unique per run, so a rerun against the same broker never sees an earlier run's data. */
function uniqueName(label: string): string {
  return `test.bus.${label}.${newId()}`;
}

export function eventMessage(streamId: string, revision: number): OutgoingMessage {
  const occurredAt = new Date().toISOString();
  return {
    key: streamId,
    headers: { 'content-type': 'application/json', 'x-test': 'bus-contract' },
    value: {
      version: 1,
      id: newId(),
      type: 'ThingHappened',
      tenantId: 'acme',
      streamId,
      revision: revision.toString(),
      position: '0',
      occurredAt,
      data: { revision },
      metadata: { tenantId: 'acme', actor: 'system', occurredAt },
    },
  };
}

/** `count` events of one stream, revisions 0..count-1. */
function streamEvents(streamId: string, count: number): OutgoingMessage[] {
  return Array.from({ length: count }, (_, revision) => eventMessage(streamId, revision));
}

const ids = (messages: readonly { value: { id: string } }[]): string[] => messages.map((message) => message.value.id);

/** The behaviour every EventBus adapter must show; run by each adapter's test file. */
export function eventBusContract(name: string, open: () => Promise<EventBus>): void {
  describe(`EventBus contract: ${name}`, () => {
    let bus: EventBus;

    beforeAll(async () => {
      bus = await open();
    });
    afterAll(async () => {
      await bus.close();
    });

    async function newTopic(label: string): Promise<string> {
      const topic = uniqueName(label);
      await bus.ensureTopic(topic, { partitions: 3, replicationFactor: 1 });
      return topic;
    }

    /** Subscribes a handler that records every delivery; bus.close() ends the subscription. */
    async function record(groupId: string, topic: string): Promise<{ received: DeliveredMessage[]; subscription: Subscription }> {
      const received: DeliveredMessage[] = [];
      const subscription = await bus.subscribe({
        groupId,
        topic,
        fromBeginning: true,
        handler: async (batch) => {
          received.push(...batch);
        },
      });
      return { received, subscription };
    }

    it('delivers published batches in publish order per key, envelope and headers intact', async () => {
      const topic = await newTopic('order');
      const [alpha, beta, gamma] = ['thing-acme.a', 'thing-acme.b', 'thing-acme.c'].map((stream) => streamEvents(stream, 5));
      // Interleaved over the streams and split into two publishes.
      const published = [0, 1, 2, 3, 4].flatMap((revision) => [alpha![revision]!, beta![revision]!, gamma![revision]!]);
      await bus.publish(topic, published.slice(0, 8));
      await bus.publish(topic, published.slice(8));

      const { received } = await record(uniqueName('group'), topic);

      await vi.waitFor(() => expect(received).toHaveLength(published.length), DELIVERY_TIMEOUT);
      for (const stream of [alpha!, beta!, gamma!]) {
        const key = stream[0]!.key;
        expect(ids(received.filter((message) => message.key === key))).toEqual(ids(stream));
      }
      const first = received.find((message) => message.value.id === published[0]!.value.id)!;
      expect(first).toMatchObject({ topic, key: published[0]!.key, headers: published[0]!.headers, value: published[0]!.value });
    });

    it('gives every consumer group every message', async () => {
      const topic = await newTopic('groups');
      const published = [...streamEvents('thing-acme.x', 3), ...streamEvents('thing-acme.y', 3)];
      await bus.publish(topic, published);

      const first = await record(uniqueName('group-one'), topic);
      const second = await record(uniqueName('group-two'), topic);

      for (const { received } of [first, second]) {
        await vi.waitFor(() => expect(ids(received).sort()).toEqual(ids(published).sort()), DELIVERY_TIMEOUT);
      }
    });

    it('shares a group between its members: together they receive every message', async () => {
      const topic = await newTopic('members');
      const groupId = uniqueName('group');
      const members = [await record(groupId, topic), await record(groupId, topic)];
      const published = ['thing-acme.m1', 'thing-acme.m2', 'thing-acme.m3'].flatMap((stream) => streamEvents(stream, 4));
      await bus.publish(topic, published);

      const receivedByAny = () => new Set(members.flatMap(({ received }) => ids(received)));
      await vi.waitFor(() => expect([...receivedByAny()].sort()).toEqual(ids(published).sort()), DELIVERY_TIMEOUT);
    });

    it('redelivers after a handler throws, and the deduplicating consumer applies each event once', async () => {
      const topic = await newTopic('redelivery');
      const groupId = uniqueName('group');
      const published = streamEvents('thing-acme.r', 4);
      const applied: string[] = [];
      const deliveries: string[] = [];
      const applyOnce = deduplicatingHandler({
        groupId,
        inbox: new InMemoryInbox(),
        applyEvent: async (event) => {
          applied.push(event.id);
        },
      });
      let failedOnce = false;
      await bus.publish(topic, published);

      await bus.subscribe({
        groupId,
        topic,
        fromBeginning: true,
        handler: async (batch) => {
          deliveries.push(...ids(batch));
          await applyOnce(batch);
          // Fails after the effects ran, as a crash before the commit would.
          if (!failedOnce) {
            failedOnce = true;
            throw new Error('transient failure after the effects');
          }
        },
      });

      await vi.waitFor(() => expect(bus.consumerLag(groupId, topic)).resolves.toBe(0), DELIVERY_TIMEOUT);
      expect(deliveries.filter((id) => id === published[0]!.value.id)).toHaveLength(2);
      expect(applied).toEqual(ids(published));
    });

    it('commits on close: a new member of the group resumes after the committed offset', async () => {
      const topic = await newTopic('resume');
      const groupId = uniqueName('group');
      const before = streamEvents('thing-acme.s', 3);
      await bus.publish(topic, before);
      const firstMember = await record(groupId, topic);
      await vi.waitFor(() => expect(firstMember.received).toHaveLength(before.length), DELIVERY_TIMEOUT);
      await firstMember.subscription.close();

      const after = [eventMessage('thing-acme.s', 3), eventMessage('thing-acme.s', 4)];
      await bus.publish(topic, after);
      const secondMember = await record(groupId, topic);

      // One key, one partition: a replay of the committed messages would arrive before the new ones.
      await vi.waitFor(() => expect(secondMember.received.length).toBeGreaterThanOrEqual(after.length), DELIVERY_TIMEOUT);
      expect(ids(secondMember.received)).toEqual(ids(after));
    });

    it("passes over the event types a group does not take: committed with their batch, never handed over; a message without the type header is", async () => {
      const topic = await newTopic('takes');
      const groupId = uniqueName('group');
      const typed = (revision: number, eventType: string | null): OutgoingMessage => {
        const message = eventMessage('thing-acme.t', revision);
        return { ...message, headers: eventType ? { ...message.headers, 'event-type': eventType } : message.headers };
      };
      const published = [typed(0, 'Wanted'), typed(1, 'Unwanted'), typed(2, null), typed(3, 'Unwanted'), typed(4, 'Unwanted')];
      await bus.publish(topic, published.slice(0, 4));
      await bus.publish(topic, published.slice(4));
      const batches: DeliveredMessage[][] = [];
      await bus.subscribe({ groupId, topic, fromBeginning: true, takes: (eventType) => eventType === 'Wanted', handler: async (batch) => void batches.push([...batch]) });

      await vi.waitFor(() => expect(bus.consumerLag(groupId, topic)).resolves.toBe(0), DELIVERY_TIMEOUT);
      expect(ids(batches.flat())).toEqual(ids([published[0]!, published[2]!]));
      expect(batches.every((batch) => batch.length > 0)).toBe(true);
    });

    it('reports the lag of a consumer group until it has committed everything', async () => {
      const topic = await newTopic('lag');
      const groupId = uniqueName('group');
      await bus.publish(topic, streamEvents('thing-acme.l', 5));

      expect(await bus.consumerLag(groupId, topic)).toBe(5);
      await record(groupId, topic);
      await vi.waitFor(() => expect(bus.consumerLag(groupId, topic)).resolves.toBe(0), DELIVERY_TIMEOUT);
    });
  });
}
