import { describe, expect, it } from 'vitest';
import { deduplicatingHandler } from '../../../src/platform/bus/deduplicating-consumer.ts';
import { InMemoryInbox } from '../../../src/platform/bus/in-memory-inbox.ts';
import type { DeliveredMessage } from '../../../src/platform/bus/port.ts';

function delivered(id: string, offset: number): DeliveredMessage {
  const occurredAt = '2026-01-01T00:00:00.000Z';
  return {
    topic: 'iam.events',
    partition: 0,
    offset: offset.toString(),
    key: 'thing-acme.1',
    headers: {},
    value: {
      version: 1,
      id,
      type: 'ThingHappened',
      tenantId: 'acme',
      streamId: 'thing-acme.1',
      revision: offset.toString(),
      position: offset.toString(),
      occurredAt,
      data: {},
      metadata: { tenantId: 'acme', actor: 'system', occurredAt },
    },
  };
}

describe('InMemoryInbox', () => {
  it('runs an effect once per group and event', async () => {
    const inbox = new InMemoryInbox();
    const runs: string[] = [];
    const effect = (label: string) => async () => {
      runs.push(label);
    };

    expect(await inbox.runOnce('webhooks', 'e1', effect('first'))).toBe(true);
    expect(await inbox.runOnce('webhooks', 'e1', effect('again'))).toBe(false);
    expect(await inbox.runOnce('log-streams', 'e1', effect('other group'))).toBe(true);
    expect(runs).toEqual(['first', 'other group']);
  });

  it('records nothing when the effect throws, so the next delivery runs it', async () => {
    const inbox = new InMemoryInbox();
    await expect(inbox.runOnce('webhooks', 'e1', async () => Promise.reject(new Error('down')))).rejects.toThrow('down');
    expect(await inbox.runOnce('webhooks', 'e1', async () => undefined)).toBe(true);
  });

  it('lets a concurrent duplicate wait for the first run, then skips it', async () => {
    const inbox = new InMemoryInbox();
    let release: () => void = () => undefined;
    let runs = 0;
    const slowEffect = async () => {
      runs++;
      await new Promise<void>((resolve) => (release = resolve));
    };

    const first = inbox.runOnce('webhooks', 'e1', slowEffect);
    const duplicate = inbox.runOnce('webhooks', 'e1', slowEffect);
    await new Promise((resolve) => setImmediate(resolve));
    release();

    expect(await Promise.all([first, duplicate])).toEqual([true, false]);
    expect(runs).toBe(1);
  });
});

describe('deduplicatingHandler', () => {
  it('applies a redelivered batch once and resumes at the event that failed', async () => {
    const applied: string[] = [];
    let failOn: string | undefined = 'e2';
    const handle = deduplicatingHandler({
      groupId: 'webhooks',
      inbox: new InMemoryInbox(),
      applyEvent: async (event) => {
        if (event.id === failOn) throw new Error('endpoint down');
        applied.push(event.id);
      },
    });
    const batch = [delivered('e1', 0), delivered('e2', 1), delivered('e3', 2)];

    await expect(handle(batch)).rejects.toThrow('endpoint down');
    expect(applied).toEqual(['e1']);

    failOn = undefined;
    await handle(batch);
    await handle(batch);
    expect(applied).toEqual(['e1', 'e2', 'e3']);
  });
});
