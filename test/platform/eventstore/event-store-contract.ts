import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WrongExpectedVersionError } from '../../../src/platform/eventstore/errors.ts';
import type { EventStore, NewEvent, RecordedEvent, TenantEventsQuery } from '../../../src/platform/eventstore/port.ts';
import { newId } from '../../../src/platform/ids.ts';

export function testEvent(type = 'SomethingHappened', data: unknown = { n: 1 }): NewEvent {
  return {
    id: newId(),
    type,
    data,
    metadata: { tenantId: 'acme', actor: 'system', occurredAt: new Date().toISOString() },
  };
}

function uniqueStream(category = 'thing'): string {
  return `${category}-acme.${newId()}`;
}

/** The behaviour every EventStore adapter must show; run by each adapter's test file. */
export function eventStoreContract(name: string, open: () => Promise<{ store: EventStore; close(): Promise<void> }>): void {
  describe(`EventStore contract: ${name}`, () => {
    let store: EventStore;
    let close: () => Promise<void>;
    beforeAll(async () => {
      ({ store, close } = await open());
    });
    afterAll(() => close());

    it('appends to a new stream and reads it back in revision order', async () => {
      const stream = uniqueStream();
      const events = [testEvent('A', { i: 0 }), testEvent('B', { i: 1 }), testEvent('C', { i: 2 })];
      const result = await store.append(stream, events, 'no_stream');
      expect(result.nextExpectedRevision).toBe(2n);
      expect(result.position).toBeGreaterThan(0n);
      const read = await store.readStream(stream);
      expect(read.map((e) => [e.type, e.revision, e.data])).toEqual([
        ['A', 0n, { i: 0 }],
        ['B', 1n, { i: 1 }],
        ['C', 2n, { i: 2 }],
      ]);
      expect(read[0]!.metadata.tenantId).toBe('acme');
      expect(read.at(-1)!.position).toBe(result.position);
      expect(await store.readStream(stream, 1n)).toHaveLength(2);
    });

    it('keeps the schema version of the metadata as a number, single and multi-stream', async () => {
      const [single, multi] = [uniqueStream(), uniqueStream()];
      const versioned = () => ({ ...testEvent('Versioned'), metadata: { ...testEvent().metadata, schemaVersion: 2 } });
      await store.append(single, [versioned()]);
      await store.appendMulti([{ streamId: multi, expectedRevision: 'no_stream', events: [versioned()] }, { streamId: uniqueStream(), expectedRevision: 'no_stream', events: [testEvent()] }]);
      for (const stream of [single, multi]) expect((await store.readStream(stream))[0]!.metadata.schemaVersion).toBe(2);
    });

    it('reads an absent stream as empty', async () => {
      expect(await store.readStream(uniqueStream())).toEqual([]);
    });

    it('reads several streams at once, each whole and in the order asked', async () => {
      const [first, absent, second] = [uniqueStream(), uniqueStream(), uniqueStream()];
      await store.appendMulti([
        { streamId: second, expectedRevision: 'no_stream', events: [testEvent('S', { i: 0 })] },
        { streamId: first, expectedRevision: 'no_stream', events: [testEvent('F', { i: 0 }), testEvent('F', { i: 1 })] },
      ]);
      const read = await store.readStreams([second, absent, first]);
      expect(read.map((events) => events.map((e) => [e.streamId, e.revision]))).toEqual([[[second, 0n]], [], [[first, 0n], [first, 1n]]]);
      expect(read[2]).toEqual(await store.readStream(first));
    });

    it('reads several streams at once, each from its own revision', async () => {
      const [first, absent, second] = [uniqueStream(), uniqueStream(), uniqueStream()];
      await store.appendMulti([
        { streamId: first, expectedRevision: 'no_stream', events: [testEvent('F', { i: 0 }), testEvent('F', { i: 1 }), testEvent('F', { i: 2 })] },
        { streamId: second, expectedRevision: 'no_stream', events: [testEvent('S', { i: 0 })] },
      ]);
      const read = await store.readStreams([first, absent, second], [1n, 0n, 1n]);
      expect(read.map((events) => events.map((e) => [e.streamId, e.revision]))).toEqual([[[first, 1n], [first, 2n]], [], []]);
      expect(read[0]).toEqual(await store.readStream(first, 1n));
    });

    it('enforces every kind of expected revision with a typed error', async () => {
      const stream = uniqueStream();
      await expect(store.append(stream, [testEvent()], 'stream_exists')).rejects.toBeInstanceOf(WrongExpectedVersionError);
      await expect(store.append(stream, [testEvent()], 0n)).rejects.toBeInstanceOf(WrongExpectedVersionError);
      await store.append(stream, [testEvent()], 'no_stream');
      await expect(store.append(stream, [testEvent()], 'no_stream')).rejects.toBeInstanceOf(WrongExpectedVersionError);
      await expect(store.append(stream, [testEvent()], 5n)).rejects.toBeInstanceOf(WrongExpectedVersionError);
      expect((await store.append(stream, [testEvent()], 0n)).nextExpectedRevision).toBe(1n);
      expect((await store.append(stream, [testEvent()], 'stream_exists')).nextExpectedRevision).toBe(2n);
      expect((await store.append(stream, [testEvent()], 'any')).nextExpectedRevision).toBe(3n);
      expect(await store.readStream(stream)).toHaveLength(4);
    });

    it('lets only one of two racing appends at the same revision win', async () => {
      const stream = uniqueStream();
      await store.append(stream, [testEvent()], 'no_stream');
      const outcomes = await Promise.allSettled([
        store.append(stream, [testEvent('X')], 0n),
        store.append(stream, [testEvent('Y')], 0n),
      ]);
      expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
      const rejected = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult;
      expect(rejected.reason).toBeInstanceOf(WrongExpectedVersionError);
      expect(await store.readStream(stream)).toHaveLength(2);
    });

    it('treats re-appending the same event ids as a no-op', async () => {
      const stream = uniqueStream();
      const events = [testEvent(), testEvent()];
      const first = await store.append(stream, events, 'no_stream');
      const again = await store.append(stream, events, 'no_stream');
      expect(again).toEqual(first);
      expect(await store.readStream(stream)).toHaveLength(2);
    });

    it('appends to several streams atomically: all or nothing', async () => {
      const owner = uniqueStream('user');
      const reservation = uniqueStream('reservation');
      await store.append(reservation, [testEvent('Claimed')], 'no_stream');
      const failing = store.appendMulti([
        { streamId: owner, expectedRevision: 'no_stream', events: [testEvent('UserCreated')] },
        { streamId: reservation, expectedRevision: 'no_stream', events: [testEvent('Claimed')] },
      ]);
      await expect(failing).rejects.toBeInstanceOf(WrongExpectedVersionError);
      expect(await store.readStream(owner)).toEqual([]);

      const results = await store.appendMulti([
        { streamId: owner, expectedRevision: 'no_stream', events: [testEvent('UserCreated')] },
        { streamId: reservation, expectedRevision: 0n, events: [testEvent('Released'), testEvent('Claimed')] },
      ]);
      expect(results.map((r) => r.nextExpectedRevision)).toEqual([0n, 2n]);
      expect(await store.readStream(owner)).toHaveLength(1);
      expect(await store.readStream(reservation)).toHaveLength(3);
    });

    // Other test files share the database cluster: their transactions may briefly hold back what a
    // global reader sees (PostgreSQL's visibility bound), so these tests wait for visibility and
    // look only at their own streams.
    it('reads the global log after a position in position order', async () => {
      const head = await store.headPosition();
      const ours = new Set([uniqueStream(), uniqueStream()]);
      const [first, second] = [...ours];
      await store.append(first!, [testEvent('One'), testEvent('Two')]);
      await store.append(second!, [testEvent('Three')]);
      const readOurs = async () => (await store.readAll(head, 1000)).filter((e) => ours.has(e.streamId));
      await expect.poll(async () => (await readOurs()).map((e) => e.type), { timeout: 10_000 }).toEqual(['One', 'Two', 'Three']);
      const read = await readOurs();
      expect(read.map((e) => e.position)).toEqual([...read.map((e) => e.position)].sort((a, b) => (a < b ? -1 : 1)));
      await expect.poll(async () => (await store.readAll(head, 1)).length, { timeout: 10_000 }).toBe(1);
      // The head is under the same visibility bound: wait for it as for the reads above.
      await expect.poll(() => store.headPosition(), { timeout: 10_000 }).toBeGreaterThanOrEqual(read.at(-1)!.position);
    });

    it("reads one tenant's events with filters, paged on the last position, never another tenant's", async () => {
      const [mine, theirs] = [`t${newId()}`, `t${newId()}`];
      const at = (iso: string, tenantId: string, type: string) => ({ ...testEvent(type), metadata: { ...testEvent().metadata, tenantId, occurredAt: iso } });
      const users = `user-${mine}.${newId()}`;
      const roles = `role-${mine}.${newId()}`;
      await store.append(users, [at('2025-01-01T00:00:00.000Z', mine, 'Created'), at('2025-01-02T00:00:00.000Z', mine, 'Renamed')]);
      await store.append(`user-${theirs}.${newId()}`, [at('2025-01-02T00:00:00.000Z', theirs, 'Created')]);
      await store.append(roles, [at('2025-01-03T00:00:00.000Z', mine, 'Created'), at('2025-01-04T00:00:00.000Z', mine, 'Deleted')]);
      const read = async (query: Omit<TenantEventsQuery, 'tenantId'>, limit = 100) =>
        (await store.readTenantEvents({ tenantId: mine, ...query }, limit)).map((e) => `${e.streamId === users ? 'user' : 'role'}:${e.type}`);
      await expect.poll(() => read({}), { timeout: 10_000 }).toEqual(['user:Created', 'user:Renamed', 'role:Created', 'role:Deleted']);
      expect(await read({ types: ['Created'] })).toEqual(['user:Created', 'role:Created']);
      expect(await read({ streamPrefix: `role-${mine}.` })).toEqual(['role:Created', 'role:Deleted']);
      expect(await read({ from: new Date('2025-01-02T00:00:00.000Z'), to: new Date('2025-01-03T00:00:00.000Z') })).toEqual(['user:Renamed', 'role:Created']);
      const all = await store.readTenantEvents({ tenantId: mine }, 100);
      const paged: string[] = [];
      for (let after: bigint | undefined; ; ) {
        const page = await store.readTenantEvents({ tenantId: mine, ...(after === undefined ? {} : { after }) }, 3);
        paged.push(...page.map((e) => e.id));
        if (page.length < 3) break;
        after = page.at(-1)!.position;
      }
      expect(paged).toEqual(all.map((e) => e.id));
      expect(await store.tenantAt(all[1]!.position)).toBe(mine);
      expect(await store.tenantAt(all.at(-1)!.position + 1n)).toBeNull();
    });

    it('subscribes to all: catches up from a position, then delivers live events', async () => {
      const head = await store.headPosition();
      const [before, live] = [uniqueStream(), uniqueStream()];
      await store.append(before, [testEvent('Before')]);
      const received: RecordedEvent[] = [];
      const subscription = store.subscribeToAll({
        after: head,
        onEvents: async (events) => {
          received.push(...events.filter((e) => e.streamId === before || e.streamId === live));
        },
      });
      try {
        await store.append(live, [testEvent('Live1'), testEvent('Live2')]);
        await expect.poll(() => received.map((e) => e.type), { timeout: 10_000 }).toEqual(['Before', 'Live1', 'Live2']);
      } finally {
        await subscription.close();
      }
    });

    it('redelivers a batch whose handler failed instead of skipping it', async () => {
      const head = await store.headPosition();
      const fragile = uniqueStream();
      await store.append(fragile, [testEvent('Fragile')]);
      let attempts = 0;
      const delivered: string[] = [];
      const subscription = store.subscribeToAll({
        after: head,
        onEvents: async (events) => {
          const ours = events.filter((e) => e.streamId === fragile);
          if (ours.length === 0) return;
          attempts += 1;
          if (attempts === 1) throw new Error('transient');
          delivered.push(...ours.map((e) => e.type));
        },
        onError: () => undefined,
      });
      try {
        await expect.poll(() => delivered, { timeout: 10_000 }).toEqual(['Fragile']);
        expect(attempts).toBe(2);
      } finally {
        await subscription.close();
      }
    });
  });
}
