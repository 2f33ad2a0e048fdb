import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresEventStore } from '../../../src/platform/eventstore/postgres.ts';
import type { RecordedEvent, SubscribeOptions } from '../../../src/platform/eventstore/port.ts';
import { SharedLogReader } from '../../../src/platform/eventstore/shared-log-reader.ts';
import { newId } from '../../../src/platform/ids.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { eventStoreContract, testEvent } from './event-store-contract.ts';

eventStoreContract('PostgreSQL behind the shared log reader', async () => {
  const db = await createTestDatabase();
  const store = new SharedLogReader(new PostgresEventStore(db.pool, { pollIntervalMs: 1000 }));
  return { store, close: async () => (await store.close(), await db.drop()) };
});

/** The PostgreSQL store, counting the subscriptions opened on it (each one a reader of the log) and its pages of history. */
class CountingStore extends PostgresEventStore {
  subscriptions = 0;
  historyReads = 0;
  override subscribeToAll(options: SubscribeOptions) {
    this.subscriptions += 1;
    return super.subscribeToAll(options);
  }
  override readAll(afterPosition: bigint | undefined, limit: number) {
    this.historyReads += 1;
    return super.readAll(afterPosition, limit);
  }
}

/** Appends from 8 concurrent writers (1 to 3 events an append); answers the ids written. */
async function concurrentWrites(store: SharedLogReader, appendsPerWriter: number): Promise<string[]> {
  const written: string[] = [];
  await Promise.all(
    Array.from({ length: 8 }, async (_, writer) => {
      const streamId = `load-acme.${newId()}`;
      for (let i = 0; i < appendsPerWriter; i += 1) {
        const events = Array.from({ length: 1 + (i % 3) }, () => testEvent('Loaded', { writer, i }));
        written.push(...events.map((e) => e.id));
        await store.append(streamId, events, i === 0 ? 'no_stream' : 'stream_exists');
      }
    }),
  );
  return written;
}

/** Every event once, in position order, and nothing else. */
function expectExactlyOnceInOrder(received: RecordedEvent[], written: string[]): void {
  const ids = received.map((e) => e.id);
  expect(new Set(ids).size).toBe(ids.length);
  expect(new Set(ids)).toEqual(new Set(written));
  for (let i = 1; i < received.length; i += 1) expect(received[i]!.position > received[i - 1]!.position).toBe(true);
}

describe('shared log reader', () => {
  let db: TestDatabase;
  let inner: CountingStore;
  let store: SharedLogReader;
  beforeAll(async () => {
    db = await createTestDatabase();
    inner = new CountingStore(db.pool, { pollIntervalMs: 50 });
    // Small limits, so that a follower held up by a slow handler is left behind within the test.
    store = new SharedLogReader(inner, { tailBatch: 20, queueLimit: 60 });
  });
  afterAll(async () => {
    await store.close();
    await db.drop();
  });

  it('reads the log once for many followers, each getting every event once and in order', async () => {
    const head = await store.headPosition();
    const before = inner.subscriptions;
    const received = Array.from({ length: 6 }, () => [] as RecordedEvent[]);
    const subscriptions = received.map((mine, i) =>
      store.subscribeToAll({ after: head, batchSize: 7 + i, onEvents: async (events) => void mine.push(...events) }),
    );
    try {
      const written = await concurrentWrites(store, 30);
      for (const mine of received) {
        await expect.poll(() => mine.length, { timeout: 30_000, interval: 50 }).toBe(written.length);
        expectExactlyOnceInOrder(mine, written);
      }
      expect(inner.subscriptions - before).toBe(1);
    } finally {
      await Promise.all(subscriptions.map((s) => s.close()));
    }
  });

  it('lets a follower whose handler is held up fall behind without holding the others, then catch up on its own', async () => {
    const head = await store.headPosition();
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const fast: RecordedEvent[] = [];
    const slow: RecordedEvent[] = [];
    const subscriptions = [
      store.subscribeToAll({ after: head, batchSize: 10, onEvents: async (events) => void fast.push(...events) }),
      store.subscribeToAll({
        after: head,
        batchSize: 10,
        onEvents: async (events) => {
          await held;
          slow.push(...events);
        },
      }),
    ];
    try {
      const written = await concurrentWrites(store, 40);
      // Far more than the slow follower may queue: the fast one gets everything while it waits.
      expect(written.length).toBeGreaterThan(60 * 2);
      await expect.poll(() => fast.length, { timeout: 30_000, interval: 50 }).toBe(written.length);
      expect(slow.length).toBe(0);
      release();
      await expect.poll(() => slow.length, { timeout: 30_000, interval: 50 }).toBe(written.length);
      expectExactlyOnceInOrder(fast, written);
      expectExactlyOnceInOrder(slow, written);
    } finally {
      release();
      await Promise.all(subscriptions.map((s) => s.close()));
    }
  });

  it('reads history once for followers that start behind the tail together (a rebuild, a restart)', async () => {
    const start = await store.headPosition();
    const history = await concurrentWrites(store, 15);
    const received = Array.from({ length: 6 }, () => [] as RecordedEvent[]);
    const readsBefore = inner.historyReads;
    const subscriptions = received.map((mine, i) =>
      store.subscribeToAll({ after: start, batchSize: 7 + i, onEvents: async (events) => void mine.push(...events) }),
    );
    try {
      for (const mine of received) {
        await expect.poll(() => mine.length, { timeout: 30_000, interval: 50 }).toBe(history.length);
        expectExactlyOnceInOrder(mine, history);
      }
      // Alone, the follower with the smallest batches would read this many pages; six of them each read theirs without sharing.
      expect(inner.historyReads - readsBefore).toBeLessThanOrEqual(Math.ceil(history.length / 7));
    } finally {
      await Promise.all(subscriptions.map((s) => s.close()));
    }
  });

  it('lets a follower that starts behind the tail read history first, then join it for live events', async () => {
    const start = await store.headPosition();
    const live: RecordedEvent[] = [];
    const leading = store.subscribeToAll({ after: start, onEvents: async (events) => void live.push(...events) });
    const history = await concurrentWrites(store, 10);
    await expect.poll(() => live.length, { timeout: 30_000, interval: 50 }).toBe(history.length);
    const late: RecordedEvent[] = [];
    const behind = store.subscribeToAll({ after: start, batchSize: 9, onEvents: async (events) => void late.push(...events) });
    try {
      const more = await concurrentWrites(store, 10);
      await expect.poll(() => late.length, { timeout: 30_000, interval: 50 }).toBe(history.length + more.length);
      expectExactlyOnceInOrder(late, [...history, ...more]);
    } finally {
      await behind.close();
      await leading.close();
    }
  });

  it('with a read interval, reads the log at most that often once caught up: appends made meanwhile come as one batch', async () => {
    const paced = new SharedLogReader(new PostgresEventStore(db.pool, { pollIntervalMs: 50 }), { readIntervalMs: 1000 });
    const batches: RecordedEvent[][] = [];
    const following = paced.subscribeToAll({ after: await paced.headPosition(), onEvents: async (events) => void batches.push(events) });
    try {
      const streamId = `paced-acme.${newId()}`;
      // The first event may come through history (the tail starting after it); once it is in, the tail reads the next.
      await paced.append(streamId, [testEvent('Paced', { i: 0 })], 'no_stream');
      await expect.poll(() => batches.length, { timeout: 10_000, interval: 10 }).toBe(1);
      await paced.append(streamId, [testEvent('Paced', { i: 1 })], 'stream_exists');
      await expect.poll(() => batches.length, { timeout: 10_000, interval: 10 }).toBe(2);
      // Each append alone, and each visible before the next: read at once, they would come one a batch.
      for (let i = 2; i <= 5; i += 1) await paced.append(streamId, [testEvent('Paced', { i })], 'stream_exists');
      await expect.poll(() => batches.flat().length, { timeout: 10_000, interval: 10 }).toBe(6);
      expect(batches.map((batch) => batch.length)).toEqual([1, 1, 4]);
    } finally {
      await following.close();
      await paced.close();
    }
  });
});
