import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../../src/platform/clock.ts';
import { systemContext } from '../../../src/platform/commands/context.ts';
import type { Decider } from '../../../src/platform/commands/decider.ts';
import { FoldedStates } from '../../../src/platform/commands/folded-states.ts';
import { handleCommand, loadState, loadStates } from '../../../src/platform/commands/handle-command.ts';
import { PostgresEventStore } from '../../../src/platform/eventstore/postgres.ts';
import type { EventStore } from '../../../src/platform/eventstore/port.ts';
import { newId } from '../../../src/platform/ids.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';

type Counted = { type: 'Counted'; data: { by: number } };
/** Counts; a command naming the total it expects is refused on any other total. */
const counter: Decider<{ total: number; events: number }, { type: 'Count'; by: number; expectTotal?: number }, Counted> = {
  initialState: () => ({ total: 0, events: 0 }),
  evolve: (state, event) => ({ total: state.total + event.data.by, events: state.events + 1 }),
  decide: (command, state) => {
    if (command.expectTotal !== undefined && command.expectTotal !== state.total) throw new Error(`the total is ${state.total}`);
    return [{ type: 'Counted', data: { by: command.by } }];
  },
};

/** One service instance's view of the store: its own object (FoldedStates are per store), recording where it reads streams from. */
function instance(store: EventStore) {
  const readsFrom: bigint[] = [];
  const own: EventStore = Object.create(store, {
    readStream: { value: (streamId: string, from = 0n) => (readsFrom.push(from), store.readStream(streamId, from)) },
  });
  const count = (streamId: string, by: number, sideAppends?: () => Promise<[]>, expectTotal?: number) =>
    handleCommand({ store: own, clock: systemClock }, counter, streamId, { type: 'Count', by, expectTotal }, systemContext('t'), sideAppends);
  return { readsFrom, count };
}

describe('commands decide on the state they remembered, and read only when it may be stale', () => {
  let db: TestDatabase;
  let store: PostgresEventStore;
  beforeAll(async () => {
    db = await createTestDatabase();
    store = new PostgresEventStore(db.pool, { pollIntervalMs: 1000 });
  });
  afterAll(async () => {
    await store.close();
    await db.drop();
  });

  it('a stream commanded again is not read: the append expecting the remembered revision checks the state', async () => {
    const one = instance(store);
    const stream = `counter-t.${newId()}`;
    for (let i = 1; i <= 4; i += 1) expect((await one.count(stream, i)).state).toEqual({ total: (i * (i + 1)) / 2, events: i });
    expect(one.readsFrom).toEqual([0n]);
    expect((await store.readStream(stream)).map((event) => event.revision)).toEqual([0n, 1n, 2n, 3n]);
  });

  it("another instance's appends make the append on the remembered state fail, and the decision is taken again on the whole stream", async () => {
    const one = instance(store);
    const two = instance(store);
    const stream = `counter-t.${newId()}`;
    await one.count(stream, 1);
    await two.count(stream, 10);
    await two.count(stream, 100);
    expect((await one.count(stream, 1000)).state).toEqual({ total: 1111, events: 4 });
    expect(one.readsFrom).toEqual([0n, 0n]);
    expect((await store.readStream(stream)).map((event) => (event.data as Counted['data']).by)).toEqual([1, 10, 100, 1000]);
  });

  it('a decision the remembered state refuses is taken again on the stream read from after it', async () => {
    const one = instance(store);
    const two = instance(store);
    const stream = `counter-t.${newId()}`;
    await one.count(stream, 1);
    await two.count(stream, 10);
    // One remembers a total of 1, which this command refuses; the stream's total is 11.
    expect((await one.count(stream, 5, undefined, 11)).state).toEqual({ total: 16, events: 3 });
    expect(one.readsFrom).toEqual([0n, 1n]);
  });

  it('a read that ends after a newer append leaves the newer state remembered', () => {
    const folded = FoldedStates.of<{ total: number; events: number }>(store, counter);
    const stream = `counter-t.${newId()}`;
    folded.remember(stream, { state: { total: 3, events: 2 }, revision: 1n });
    folded.remember(stream, { state: { total: 1, events: 1 }, revision: 0n });
    expect(folded.get(stream)).toEqual({ state: { total: 3, events: 2 }, revision: 1n });
  });

  it('overlapping reads of one stream fold each event once (two reads in one round trip, or two requests)', async () => {
    const one = instance(store);
    const stream = `counter-t.${newId()}`;
    await one.count(stream, 1);
    const metadata = { tenantId: 't', actor: 'system', occurredAt: new Date().toISOString() };
    await store.append(stream, [{ id: newId(), type: 'Counted', data: { by: 10 }, metadata }], 'any');
    // Both reads start after the remembered revision; the second to fold finds the first's result remembered.
    const read = { decider: counter, streamId: stream };
    const [first, second] = await loadStates({ store }, [read, read]);
    expect(first).toEqual({ state: { total: 11, events: 2 }, revision: 1n });
    expect(second).toEqual(first);
    expect(FoldedStates.of(store, counter).get(stream)).toEqual(first);
  });

  it('a read folds its tail onto the state it started from, even when that state is forgotten or evicted meanwhile', async () => {
    const stream = `counter-t.${newId()}`;
    let during: (() => void) | null = null;
    const own: EventStore = Object.create(store, {
      readStream: { value: async (streamId: string, from = 0n) => {
        const events = await store.readStream(streamId, from);
        during?.();
        return events;
      } },
    });
    await handleCommand({ store: own, clock: systemClock }, counter, stream, { type: 'Count', by: 1 }, systemContext('t'));
    const metadata = { tenantId: 't', actor: 'system', occurredAt: new Date().toISOString() };
    await store.append(stream, [{ id: newId(), type: 'Counted', data: { by: 10 }, metadata }], 'any');
    // A conflict elsewhere (or the cache's eviction) drops the remembered state while the tail is read.
    during = () => FoldedStates.of(own, counter).forget(stream);
    expect(await loadState({ store: own }, counter, stream)).toEqual({ state: { total: 11, events: 2 }, revision: 1n });
  });

  it('an append that loses to another writer forgets the remembered state and decides again on the whole stream', async () => {
    const one = instance(store);
    const stream = `counter-t.${newId()}`;
    await one.count(stream, 1);
    let interfered = false;
    // Between the decision and the append, another writer appends to the same stream.
    const result = await one.count(stream, 2, async () => {
      if (!interfered) {
        interfered = true;
        const metadata = { tenantId: 't', actor: 'system', occurredAt: new Date().toISOString() };
        await store.append(stream, [{ id: newId(), type: 'Counted', data: { by: 40 }, metadata }], 'any');
      }
      return [];
    });
    expect(result.state).toEqual({ total: 43, events: 3 });
    expect(one.readsFrom).toEqual([0n, 0n]);
    expect((await store.readStream(stream)).map((event) => (event.data as Counted['data']).by)).toEqual([1, 40, 2]);
  });
});
