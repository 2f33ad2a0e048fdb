import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { IN_PROCESS_RETAINED_MESSAGES, InProcessEventBus } from '../../../src/platform/bus/in-process.ts';
import { eventBusContract, eventMessage } from './bus-contract.ts';

const logger = pino({ level: process.env.LOG_LEVEL ?? 'silent' });

eventBusContract('in-process', async () => new InProcessEventBus(logger));

describe('InProcessEventBus durability', () => {
  it('resolves a publish only once every subscribed group has committed it: nothing else survives the process', async () => {
    const bus = new InProcessEventBus(logger);
    await bus.ensureTopic('events', { partitions: 1, replicationFactor: 1 });
    let release: () => void = () => undefined;
    const handled = new Promise<void>((resolve) => (release = resolve));
    await bus.subscribe({ groupId: 'fast', topic: 'events', fromBeginning: true, handler: async () => undefined });
    await bus.subscribe({ groupId: 'slow', topic: 'events', fromBeginning: true, handler: () => handled });

    let published = false;
    const publishing = bus.publish('events', [eventMessage('thing-acme.1', 0)]).then(() => (published = true));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(published).toBe(false);
    expect(bus.subscribedGroups().map((group) => group.groupId).sort()).toEqual(['fast', 'slow']);

    release();
    await publishing;
    expect(await bus.consumerLag('slow', 'events')).toBe(0);
    await bus.close();
  });

  it('rejects a publish still waiting for a consumer when the bus closes, so a relay keeps its checkpoint', async () => {
    const bus = new InProcessEventBus(logger);
    await bus.ensureTopic('events', { partitions: 1, replicationFactor: 1 });
    await bus.subscribe({ groupId: 'failing', topic: 'events', fromBeginning: true, handler: async () => Promise.reject(new Error('down')) });

    const publishing = bus.publish('events', [eventMessage('thing-acme.1', 0)]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await bus.close();
    await expect(publishing).rejects.toThrow('closed before every consumer group committed');
  });

  it('keeps only the last messages every group has committed, so memory stays bounded; a group joining from the beginning starts at the oldest kept', async () => {
    const bus = new InProcessEventBus(logger);
    await bus.ensureTopic('events', { partitions: 1, replicationFactor: 1 });
    await bus.subscribe({ groupId: 'steady', topic: 'events', fromBeginning: true, handler: async () => undefined });
    const published = IN_PROCESS_RETAINED_MESSAGES + 3_000;
    for (let offset = 0; offset < published; offset += 500) {
      await bus.publish('events', Array.from({ length: 500 }, (_, index) => eventMessage('thing-acme.1', offset + index)));
    }

    const offsets: number[] = [];
    let caughtUp: () => void = () => undefined;
    const late = new Promise<void>((resolve) => (caughtUp = resolve));
    await bus.subscribe({
      groupId: 'late',
      topic: 'events',
      fromBeginning: true,
      handler: async (batch) => {
        offsets.push(...batch.map((message) => Number(message.offset)));
        if (offsets.at(-1) === published - 1) caughtUp();
      },
    });
    await late;
    expect(offsets[0]).toBeGreaterThan(0);
    expect(offsets[0]).toBeLessThanOrEqual(published - IN_PROCESS_RETAINED_MESSAGES);
    expect(offsets).toEqual(Array.from({ length: published - offsets[0]! }, (_, index) => offsets[0]! + index));
    await bus.close();
  });
});
