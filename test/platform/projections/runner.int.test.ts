import type pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventStore, SubscribeOptions } from '../../../src/platform/eventstore/port.ts';
import { PostgresEventStore } from '../../../src/platform/eventstore/postgres.ts';
import { SharedLogReader } from '../../../src/platform/eventstore/shared-log-reader.ts';
import { newId } from '../../../src/platform/ids.ts';
import { pipelinedPool } from '../../../src/platform/db/pool.ts';
import { checkpointedBatches, ensureCheckpoint, readCheckpoint } from '../../../src/platform/projections/checkpoints.ts';
import { SMALL_TURN_EVENTS } from '../../../src/platform/projections/batch-groups.ts';
import { defineProjection } from '../../../src/platform/projections/projection.ts';
import { rebuildProjection } from '../../../src/platform/projections/rebuild.ts';
import { ProjectionRunner } from '../../../src/platform/projections/runner.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { testEvent } from '../eventstore/event-store-contract.ts';

const logger = pino({ level: 'silent' });

// A small read model: a counter per stream, and the last event seen, derived only from events.
const counters = defineProjection({
  name: 'test-counters',
  tables: ['test_counters'],
  handlers: {
    Counted: async (event, tx) => {
      await tx.query(
        `insert into test_counters (stream_id, count, last_event) values ($1, 1, $2)
         on conflict (stream_id) do update set count = test_counters.count + 1, last_event = $2`,
        [event.streamId, event.id],
      );
    },
  },
});

// The same counter, each run of events applied by statements that read nothing (batchWrites): a
// group of such batches is sent whole. One upsert per event, so a run is several statements in order.
const writtenCounters = defineProjection({
  name: 'test-written-counters',
  tables: ['test_written_counters'],
  handlers: {},
  batchWrites: {
    Counted: (events) =>
      events.map((event) => ({
        text: `insert into test_written_counters (stream_id, count, last_event) values ($1, 1, $2)
               on conflict (stream_id) do update set count = test_written_counters.count + 1, last_event = $2`,
        values: [event.streamId, event.id],
      })),
  },
});
const counterModels = [
  ['one by one', counters, 'test_counters'],
  ['as statements', writtenCounters, 'test_written_counters'],
] as const;

describe('projection runner', () => {
  let db: TestDatabase;
  let store: PostgresEventStore;
  beforeAll(async () => {
    db = await createTestDatabase();
    await db.pool.query('create table test_counters (stream_id text primary key, count int not null, last_event uuid not null)');
    await db.pool.query('create table test_written_counters (like test_counters including all)');
    await db.pool.query('create table test_group_writes (like test_counters including all)');
    await db.pool.query('create table test_gated (event_id uuid primary key)');
    await db.pool.query('create table test_tallies (projection text, stream_id text, count int not null, primary key (projection, stream_id))');
    store = new PostgresEventStore(db.pool, { pollIntervalMs: 50 });
  });
  afterAll(async () => {
    await store.close();
    await db.drop();
  });

  const rows = async (table = 'test_counters') => (await db.pool.query(`select * from ${table} order by stream_id`)).rows;

  it('applies events, commits the checkpoint with the rows, and lets writers wait for a position', async () => {
    const runner = new ProjectionRunner([counters], store, db.pool, logger);
    await runner.start();
    try {
      const stream = `counter-acme.${newId()}`;
      const { position } = await store.append(stream, [testEvent('Counted'), testEvent('Ignored'), testEvent('Counted')]);
      expect(await runner.waitFor(position, 5000)).toBe(true);
      expect(await rows()).toEqual([expect.objectContaining({ stream_id: stream, count: 2 })]);
      expect(await readCheckpoint(db.pool, 'test-counters')).toBe(position);
      expect(await runner.waitFor(position + 1_000_000_000n, 50)).toBe(false);
    } finally {
      await runner.stop();
    }
  });

  /** A pipelined pool of one connection whose writes to the socket are counted. */
  const countedWrites = async (test: (pool: pg.Pool, writes: () => number) => Promise<void>) => {
    const pool = pipelinedPool(db.pool, 1);
    try {
      const client = await pool.connect();
      const socket = (client as unknown as pg.Client).connection.stream as unknown as Record<'_write' | '_writev', (...args: unknown[]) => unknown>;
      client.release();
      let writes = 0;
      for (const method of ['_write', '_writev'] as const) {
        const write = socket[method]!.bind(socket);
        socket[method] = (...args: unknown[]) => ((writes += 1), write(...args));
      }
      await test(pool, () => writes);
    } finally {
      await pool.end();
    }
  };

  it("sends a group's opening statements with an optimistic batch's first one in one write to the socket, and its closing in one", () =>
    countedWrites(async (pool, writes) => {
      const expected = await ensureCheckpoint(pool, 'test-writes');
      const before = writes();
      const work = async (tx: pg.PoolClient) => ((await tx.query('select 1')), { save: expected, result: 'applied' });
      expect(await checkpointedBatches(pool, [{ name: 'test-writes', expected, work }], true)).toEqual(['applied']);
      expect(writes() - before).toBe(2);
    }));

  describe('a group whose batches all come as statements (writes)', () => {
    const stream = () => `written-acme.${newId()}`;
    const upsert = (id: string) => ({
      text: `insert into test_group_writes (stream_id, count, last_event) values ($1, 1, $2)
             on conflict (stream_id) do update set count = test_group_writes.count + 1, last_event = $2`,
      values: [id, newId()],
    });
    const unused = async (): Promise<never> => {
      throw new Error('the batch was applied by its work, not sent whole');
    };
    const counted = async (id: string) => (await rows('test_group_writes')).find((row) => row.stream_id === id)?.count ?? 0;

    it('is sent whole in one write to the socket, and moves each checkpoint with its rows', () =>
      countedWrites(async (pool, writes) => {
        const [a, b] = [stream(), stream()];
        const [fromA, fromB] = [await ensureCheckpoint(pool, 'test-writes-a'), await ensureCheckpoint(pool, 'test-writes-b')];
        const before = writes();
        const results = await checkpointedBatches(
          pool,
          [
            { name: 'test-writes-a', expected: fromA, work: unused, writes: { statements: [upsert(a), upsert(a)], reached: fromA + 5n, result: 'a' } },
            { name: 'test-writes-b', expected: fromB, work: unused, writes: { statements: [upsert(b)], reached: fromB + 7n, result: 'b' } },
          ],
          true,
        );
        expect(writes() - before).toBe(1);
        expect(results).toEqual(['a', 'b']);
        expect([await counted(a), await counted(b)]).toEqual([2, 1]);
        expect([await readCheckpoint(pool, 'test-writes-a'), await readCheckpoint(pool, 'test-writes-b')]).toEqual([fromA + 5n, fromB + 7n]);
      }));

    it('is rolled back whole when a checkpoint is not where its batch expected it (another runner moved it)', async () => {
      const pool = pipelinedPool(db.pool, 1);
      try {
        const [a, b] = [stream(), stream()];
        const [fromA, fromB] = [await ensureCheckpoint(pool, 'test-writes-a'), await ensureCheckpoint(pool, 'test-writes-b')];
        await expect(
          checkpointedBatches(
            pool,
            [
              { name: 'test-writes-a', expected: fromA, work: unused, writes: { statements: [upsert(a)], reached: fromA + 1n, result: 'a' } },
              { name: 'test-writes-b', expected: fromB - 1n, work: unused, writes: { statements: [upsert(b)], reached: fromB + 1n, result: 'b' } },
            ],
            true,
          ),
        ).rejects.toThrow(/checkpoint moved/);
        expect([await counted(a), await counted(b)]).toEqual([0, 0]);
        expect([await readCheckpoint(pool, 'test-writes-a'), await readCheckpoint(pool, 'test-writes-b')]).toEqual([fromA, fromB]);
        // The connection is out of the aborted transaction: the next group commits.
        const next = await checkpointedBatches(pool, [{ name: 'test-writes-a', expected: fromA, work: unused, writes: { statements: [upsert(a)], reached: fromA + 1n, result: 'a' } }], true);
        expect([next, await counted(a)]).toEqual([['a'], 1]);
      } finally {
        await pool.end();
      }
    });

    const circular: Record<string, unknown> = {};
    circular.self = circular;
    it.each([
      // The server refuses it: the transaction is aborted, and the commit behind it rolls back.
      ['is rolled back whole when one of its statements fails, the statements before it included', { text: 'insert into test_group_writes (stream_id, count, last_event) values ($1, null, $2)', values: [stream(), newId()] }, /null value/],
      // The client cannot encode it: it would leave that one out and commit the rest, so nothing is sent.
      ['sends nothing when the client cannot encode one of its statements', { text: 'select $1::jsonb', values: [circular] }, /circular/],
    ] as const)('%s', async (_, failing, error) => {
      const pool = pipelinedPool(db.pool, 1);
      try {
        const a = stream();
        const from = await ensureCheckpoint(pool, 'test-writes-a');
        await expect(
          checkpointedBatches(pool, [{ name: 'test-writes-a', expected: from, work: unused, writes: { statements: [upsert(a), { ...failing, values: [...failing.values] }, upsert(a)], reached: from + 1n, result: 'a' } }], true),
        ).rejects.toThrow(error);
        expect(await counted(a)).toBe(0);
        expect(await readCheckpoint(pool, 'test-writes-a')).toBe(from);
      } finally {
        await pool.end();
      }
    });
  });

  it('resumes from its checkpoint after a restart without applying anything twice', async () => {
    const stream = `counter-acme.${newId()}`;
    const { position } = await store.append(stream, [testEvent('Counted')]);
    const runner = new ProjectionRunner([counters], store, db.pool, logger);
    await runner.start();
    expect(await runner.waitFor(position, 5000)).toBe(true);
    await runner.stop();
    const again = new ProjectionRunner([counters], store, db.pool, logger);
    await again.start();
    const next = await store.append(stream, [testEvent('Counted')]);
    expect(await again.waitFor(next.position, 5000)).toBe(true);
    await again.stop();
    const row = (await rows()).find((r) => r.stream_id === stream);
    expect(row.count).toBe(2);
  });

  it('passes batches it handles nothing of without a transaction, and saves the checkpoint with the next one it applies', async () => {
    const runner = new ProjectionRunner([counters], store, db.pool, logger);
    await runner.start();
    try {
      expect(await runner.waitFor(await store.headPosition(), 5000)).toBe(true);
      const before = await readCheckpoint(db.pool, 'test-counters');
      const ignored = await store.append(`other-acme.${newId()}`, [testEvent('Ignored'), testEvent('Ignored')]);
      expect(await runner.waitFor(ignored.position, 5000)).toBe(true);
      expect(await readCheckpoint(db.pool, 'test-counters')).toBe(before);
      const stream = `counter-acme.${newId()}`;
      const counted = await store.append(stream, [testEvent('Counted')]);
      expect(await runner.waitFor(counted.position, 5000)).toBe(true);
      expect(await readCheckpoint(db.pool, 'test-counters')).toBe(counted.position);
      expect((await rows()).find((r) => r.stream_id === stream).count).toBe(1);
    } finally {
      await runner.stop();
    }
  });

  it.each(counterModels)('two runners of one projection (two instances) never apply an event twice (events applied %s)', async (_, model, table) => {
    const a = new ProjectionRunner([model], store, db.pool, logger);
    const b = new ProjectionRunner([model], store, db.pool, logger);
    await Promise.all([a.start(), b.start()]);
    try {
      const stream = `counter-acme.${newId()}`;
      let last = 0n;
      for (let i = 0; i < 20; i += 1) last = (await store.append(stream, [testEvent('Counted')])).position;
      expect(await a.waitFor(last, 5000)).toBe(true);
      expect(await b.waitFor(last, 5000)).toBe(true);
      expect((await rows(table)).find((r) => r.stream_id === stream).count).toBe(20);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it('releases waiters only for events it has announced, even when another instance applied further', async () => {
    const a = new ProjectionRunner([counters], store, db.pool, logger);
    // B's log reader hands it nothing until A has applied everything: B's first batch of 2,000 then
    // ends below the checkpoint A saved.
    let aDone!: () => void;
    const aApplied = new Promise<void>((resolve) => (aDone = resolve));
    const heldBack: EventStore = Object.create(store, {
      subscribeToAll: {
        value: (options: SubscribeOptions) =>
          store.subscribeToAll({ ...options, onEvents: async (events) => aApplied.then(() => options.onEvents(events)) }),
      },
    });
    const b = new ProjectionRunner([counters], heldBack, db.pool, logger);
    const announced = new Set<bigint>();
    b.onApplied('test-counters', (events) => events.forEach((event) => announced.add(event.position)));
    await Promise.all([a.start(), b.start()]);
    try {
      const stream = `counter-acme.${newId()}`;
      const { position } = await store.append(stream, Array.from({ length: 2100 }, () => testEvent('Counted')));
      // 2,100 events one by one: bounds fit a busy machine.
      expect(await a.waitFor(position, 30_000)).toBe(true);
      aDone();
      expect(await b.waitFor(position, 30_000)).toBe(true);
      expect(announced.has(position)).toBe(true);
    } finally {
      aDone();
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it('holds back no reader of the log while a batch has written nothing yet (the checkpoint lock gives the transaction no id)', async () => {
    let entered!: () => void;
    const handlerEntered = new Promise<void>((resolve) => (entered = resolve));
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const gated = defineProjection({
      name: 'test-gated',
      tables: ['test_gated'],
      handlers: {},
      batchHandlers: {
        Gated: async (events, tx) => {
          entered();
          await gate;
          await tx.query('insert into test_gated (event_id) values ($1)', [events[0]!.id]);
        },
      },
    });
    const runner = new ProjectionRunner([gated], store, db.pool, logger);
    await runner.start();
    try {
      const first = await store.append(`gated-acme.${newId()}`, [testEvent('Gated')]);
      await handlerEntered;
      // Appended while the projection's transaction is open, holding its checkpoint lock.
      const later = await store.append(`counter-acme.${newId()}`, [testEvent('Ignored')]);
      // Eventually: transactions of other databases of the cluster (other test files) hold readers back for a moment too.
      await expect
        .poll(async () => (await store.readAll(first.position, 10)).map((event) => event.position), { timeout: 15_000, interval: 50 })
        .toContain(later.position);
      open();
      expect(await runner.waitFor(later.position, 5000)).toBe(true);
    } finally {
      open();
      await runner.stop();
    }
  });

  it.each(counterModels)('rebuilds from position 0 to identical rows, while a runner keeps running (events applied %s)', async (_, model, table) => {
    const runner = new ProjectionRunner([model], store, db.pool, logger);
    await runner.start();
    try {
      const { position } = await store.append(`counter-acme.${newId()}`, [testEvent('Counted')]);
      expect(await runner.waitFor(position, 5000)).toBe(true);
      const before = await rows(table);
      await rebuildProjection(model, store, db.pool, logger);
      expect(await rows(table)).toEqual(before);
      // The running instance rewound with the reset and keeps applying new events exactly once.
      const stream = `counter-acme.${newId()}`;
      const next = await store.append(stream, [testEvent('Counted'), testEvent('Counted')]);
      expect(await runner.waitFor(next.position, 5000)).toBe(true);
      expect((await rows(table)).find((r) => r.stream_id === stream).count).toBe(2);
      expect((await rows(table)).filter((r) => r.stream_id !== stream)).toEqual(before);
    } finally {
      await runner.stop();
    }
  });

  describe('projections that get a batch together (one shared log reader)', () => {
    // Tallies per stream in rows of its own; `failing` makes its handler throw until cleared.
    const failing = new Set<string>();
    // A projection's handler waits here until its gate opens (at the latest when the test ends).
    const held = new Map<string, Promise<void>>();
    const gates: (() => void)[] = [];
    const hold = (projections: string[]): (() => void) => {
      let open = (): void => undefined;
      const gate = new Promise<void>((resolve) => (open = resolve));
      for (const name of projections) held.set(name, gate);
      gates.push(open);
      return open;
    };
    const tally = (name: string) =>
      defineProjection({
        name,
        tables: ['test_tallies'],
        handlers: {},
        batchHandlers: {
          Tallied: async (events, tx) => {
            if (failing.has(name)) throw new Error(`${name} fails`);
            await held.get(name);
            await tx.query(
              `insert into test_tallies values ($1, $2, $3) on conflict (projection, stream_id) do update set count = test_tallies.count + excluded.count`,
              [name, events[0]!.streamId, events.length],
            );
          },
        },
      });
    const names = ['test-tally-a', 'test-tally-b', 'test-tally-c', 'test-tally-d'];
    const tallies = async (stream: string) =>
      Object.fromEntries(
        (await db.pool.query('select projection, count from test_tallies where stream_id = $1', [stream])).rows.map((r) => [r.projection, r.count]),
      );

    /** The four projections, caught up with the log, following one shared reader. */
    const withTallies = async (test: (runner: ProjectionRunner) => Promise<void>) => {
      const reader = new SharedLogReader(store);
      const runner = new ProjectionRunner(names.map(tally), reader, db.pool, logger);
      await runner.start();
      try {
        // The last event written, not the head readers see: a transaction of another test file's
        // database that ends at the moment of the read can hold the visibility bound back, and a
        // projection still reading history then would take the test's next batch in a turn of its own.
        expect(await runner.waitFor(await store.lastWrittenPosition(), 10_000)).toBe(true);
        // Caught up is not yet joined: a projection whose checkpoint was already there may still be on
        // its first read of the history, and would take the test's batch in a turn of its own. A
        // warm-up event applied by all four leaves each on the shared tail (one that read it from the
        // history joins right after applying it).
        const warmUp = await store.append(`tally-acme.${newId()}`, [testEvent('Tallied')]);
        expect(await runner.waitFor(warmUp.position, 10_000)).toBe(true);
        await test(runner);
      } finally {
        failing.clear();
        held.clear();
        gates.splice(0).forEach((open) => open());
        await runner.stop();
        await reader.close();
      }
    };

    it('commit in shared transactions, each moving its own checkpoint', () =>
      withTallies(async (runner) => {
        const stream = `tally-acme.${newId()}`;
        const { position } = await store.append(stream, [testEvent('Tallied'), testEvent('Tallied')]);
        expect(await runner.waitFor(position, 10_000)).toBe(true);
        expect(await tallies(stream)).toEqual(Object.fromEntries(names.map((name) => [name, 2])));
        const saved = await db.pool.query<{ position: string; writer: string }>(
          'select position, xmin::text as writer from projection_checkpoints where name = any($1)',
          [names],
        );
        expect(saved.rows.map((row) => BigInt(row.position))).toEqual(names.map(() => position));
        // Four read models, fewer transactions.
        expect(new Set(saved.rows.map((row) => row.writer)).size).toBeLessThan(names.length);
      }));

    it('commit a turn of small batches in one transaction, whatever their groups', () =>
      withTallies(async (runner) => {
        const stream = `tally-acme.${newId()}`;
        const { position } = await store.append(stream, [testEvent('Tallied'), testEvent('Tallied')]);
        expect(await runner.waitFor(position, 10_000)).toBe(true);
        const saved = await db.pool.query<{ writer: string }>('select xmin::text as writer from projection_checkpoints where name = any($1)', [names]);
        expect(new Set(saved.rows.map((row) => row.writer)).size).toBe(1);
      }));

    it('keep their groups: projections that committed together apply the next batch together, while the other group is still busy', () =>
      withTallies(async (runner) => {
        const writers = async (of: string[]) =>
          (await db.pool.query<{ name: string; writer: string }>('select name, xmin::text as writer from projection_checkpoints where name = any($1)', [of])).rows;
        const stream = `tally-acme.${newId()}`;
        // Batches too large for one group: the turn is split.
        const large = () => Array.from({ length: SMALL_TURN_EVENTS }, () => testEvent('Tallied'));
        const start = await store.append(stream, large());
        expect(await runner.waitFor(start.position, 10_000)).toBe(true);
        // The two groups of that batch: the first projection's, and the others.
        const all = await writers(names);
        const first = all.find((row) => row.name === names[0])!.writer;
        const busy = all.filter((row) => row.writer === first).map((row) => row.name);
        const free = names.filter((name) => !busy.includes(name));
        expect(free.length).toBeGreaterThan(1);
        // The first group's handlers hold its transaction open before anything is written (it has no
        // transaction id, so it hides no append from the log's readers); the other group goes on alone.
        const open = hold(busy);
        const next = await store.append(stream, large());
        expect(await runner.waitFor(next.position, 10_000, free)).toBe(true);
        const last = await store.append(stream, large());
        expect(await runner.waitFor(last.position, 10_000, free)).toBe(true);
        // Alone in their turn, they still share one transaction (they were once split in two).
        expect(new Set((await writers(free)).map((row) => row.writer)).size).toBe(1);
        open();
        expect(await runner.waitFor(last.position, 10_000)).toBe(true);
        expect(await tallies(stream)).toEqual(Object.fromEntries(names.map((name) => [name, 3 * SMALL_TURN_EVENTS])));
      }));

    it('let one failing projection retry on its own while the others apply the batch once', () =>
      withTallies(async (runner) => {
        failing.add('test-tally-b');
        const stream = `tally-acme.${newId()}`;
        const { position } = await store.append(stream, [testEvent('Tallied')]);
        const healthy = names.filter((name) => name !== 'test-tally-b');
        expect(await runner.waitFor(position, 10_000, healthy)).toBe(true);
        expect(await runner.waitFor(position, 300, ['test-tally-b'])).toBe(false);
        failing.delete('test-tally-b');
        expect(await runner.waitFor(position, 10_000)).toBe(true);
        expect(await tallies(stream)).toEqual(Object.fromEntries(names.map((name) => [name, 1])));
      }));
  });
});
