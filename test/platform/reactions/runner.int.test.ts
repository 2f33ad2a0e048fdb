import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../../src/platform/clock.ts';
import type { Decider } from '../../../src/platform/commands/decider.ts';
import { handleCommand } from '../../../src/platform/commands/handle-command.ts';
import { PostgresEventStore } from '../../../src/platform/eventstore/postgres.ts';
import type { RecordedEvent } from '../../../src/platform/eventstore/port.ts';
import { createPool } from '../../../src/platform/db/pool.ts';
import { newId } from '../../../src/platform/ids.ts';
import { ProjectionRunner } from '../../../src/platform/projections/runner.ts';
import { defineReaction, type Reaction } from '../../../src/platform/reactions/reaction.ts';
import { ReactionRunner } from '../../../src/platform/reactions/runner.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { testEvent } from '../eventstore/event-store-contract.ts';
import { watchSessionStatements } from '../../support/session-statements.ts';

const logger = pino({ level: 'silent' });

// A tiny aggregate: a ping is answered once, however often it is asked to (idempotent).
type AnswerEvent = { type: 'Answered'; data: { ping: string } };
const answerDecider: Decider<{ answered: boolean }, { type: 'Answer'; ping: string }, AnswerEvent> = {
  initialState: () => ({ answered: false }),
  evolve: () => ({ answered: true }),
  decide: (command, state) => (state.answered ? [] : [{ type: 'Answered', data: { ping: command.ping } }]),
};

describe('reaction runner', () => {
  let db: TestDatabase;
  let store: PostgresEventStore;
  let readModels: ProjectionRunner;
  /** How often each handler ran per ping, and pings that fail a number of times first. */
  const runs = new Map<string, number>();
  const failuresLeft = new Map<string, number>();

  beforeAll(async () => {
    db = await createTestDatabase();
    store = new PostgresEventStore(db.pool, { pollIntervalMs: 50 });
    readModels = new ProjectionRunner([], store, db.pool, logger);
  });
  afterAll(async () => {
    await store.close();
    await db.drop();
  });

  const answering = (name: string, commandStore = store): Reaction =>
    defineReaction({
      name,
      handlers: {
        Pinged: async (event, { command, readModelsPassed }) => {
          await readModelsPassed([]);
          const key = `${name}:${event.streamId}`;
          runs.set(key, (runs.get(key) ?? 0) + 1);
          const left = failuresLeft.get(key) ?? 0;
          if (left > 0) {
            failuresLeft.set(key, left - 1);
            throw new Error('downstream unavailable');
          }
          const answer = `answer-acme.${name}.${event.streamId}`;
          const { position } = await handleCommand({ store: commandStore, clock: systemClock }, answerDecider, answer, { type: 'Answer', ping: event.streamId }, command);
          return position;
        },
      },
    });
  const runner = (...reactions: Reaction[]) => new ReactionRunner(reactions, { store, pool: db.pool, logger, readModels, readModelTimeoutMs: 1000 });

  it('holds no pool connection while its commands run: a pool of one is enough', async () => {
    const pool = createPool(db.url, 1);
    const smallStore = new PostgresEventStore(pool, { pollIntervalMs: 50 });
    const reactions = new ReactionRunner([answering('small-pool', smallStore)], { store: smallStore, pool, logger, readModels });
    await reactions.start();
    try {
      const pinged = await ping();
      expect(await reactions.waitFor(pinged.position, 5000)).not.toBeNull();
      expect(await answers('small-pool', pinged.streamId)).toHaveLength(1);
    } finally {
      await reactions.stop();
      await smallStore.close();
      await pool.end();
    }
  });
  const ping = async () => {
    const streamId = `ping-acme.${newId()}`;
    const event = { ...testEvent('Pinged'), metadata: { ...testEvent().metadata, correlationId: newId() } };
    const { position } = await store.append(streamId, [event]);
    return { streamId, position, event };
  };
  const answers = async (name: string, streamId: string): Promise<RecordedEvent[]> => store.readStream(`answer-acme.${name}.${streamId}`);
  const checkpoint = async (name: string) =>
    (await db.pool.query<{ position: string; caused_position: string }>('select position, caused_position from reaction_checkpoints where name = $1', [name])).rows[0];

  it('issues commands as the system, caused by the event, and moves its checkpoint after them', async () => {
    const reactions = runner(answering('first'));
    await reactions.start();
    try {
      const pinged = await ping();
      const caused = await reactions.waitFor(pinged.position, 5000);
      const [answer] = await answers('first', pinged.streamId);
      expect(answer?.metadata).toMatchObject({ tenantId: 'acme', actor: 'system', causationId: pinged.event.id, correlationId: pinged.event.metadata.correlationId });
      expect(caused).toBe(answer!.position);
      expect(BigInt((await checkpoint('first'))!.position)).toBeGreaterThanOrEqual(pinged.position);
      expect(BigInt((await checkpoint('first'))!.caused_position)).toBe(answer!.position);
      expect(await reactions.waitFor(pinged.position + 1_000_000_000n, 50)).toBeNull();
    } finally {
      await reactions.stop();
    }
  });

  it('passes events it has nothing to do for without a transaction, and saves its checkpoint with the next reaction', async () => {
    const reactions = runner(answering('idle'));
    await reactions.start();
    try {
      const first = await ping();
      expect(await reactions.waitFor(first.position, 5000)).not.toBeNull();
      const saved = (await checkpoint('idle'))!.position;
      const other = await store.append(`other-acme.${newId()}`, [testEvent('Unrelated')]);
      expect(await reactions.waitFor(other.position, 5000)).not.toBeNull();
      expect((await checkpoint('idle'))!.position).toBe(saved);
      const second = await ping();
      expect(await reactions.waitFor(second.position, 5000)).not.toBeNull();
      expect(BigInt((await checkpoint('idle'))!.position)).toBeGreaterThanOrEqual(second.position);
      expect(await answers('idle', second.streamId)).toHaveLength(1);
    } finally {
      await reactions.stop();
    }
  });

  it('opens a batch (transaction, lock, checkpoint) in one round trip on its lock session and closes it (checkpoint, commit) in another', async () => {
    const reactions = runner(answering('two-trips'));
    await reactions.start();
    // Caught up with the earlier tests' pings first: one batch is watched.
    expect(await reactions.waitFor((await ping()).position, 5000)).not.toBeNull();
    // Observed: the statements of the reaction's own session (the commands' appends go through the pool).
    const { sent, stop } = watchSessionStatements('iam-reaction:two-trips');
    try {
      const pinged = await ping();
      expect(await reactions.waitFor(pinged.position, 5000)).not.toBeNull();
      expect(sent).toHaveLength(2);
      expect(sent[0]).toMatch(/^begin;.*pg_advisory_xact_lock.*from reaction_checkpoints/);
      expect(sent[1]).toMatch(/^update reaction_checkpoints .*; commit$/);
      expect(BigInt((await checkpoint('two-trips'))!.position)).toBeGreaterThanOrEqual(pinged.position);
    } finally {
      stop();
      await reactions.stop();
    }
  });

  it("passes a batch without a transaction when its own check says every event needs nothing, and reacts when one does not", async () => {
    const quiet = new Set<string>();
    const reaction = answering('checked');
    const reactions = runner({ ...reaction, nothingToDo: { Pinged: async (event, { readModelsPassed }) => (await readModelsPassed([]), quiet.has(event.streamId)) } });
    await reactions.start();
    expect(await reactions.waitFor((await ping()).position, 5000)).not.toBeNull();
    const { sent, stop } = watchSessionStatements('iam-reaction:checked');
    try {
      const streamId = `ping-acme.${newId()}`;
      quiet.add(streamId);
      const passed = await store.append(streamId, [{ ...testEvent('Pinged'), metadata: { ...testEvent().metadata, correlationId: newId() } }]);
      expect(await reactions.waitFor(passed.position, 5000)).not.toBeNull();
      expect(sent).toEqual([]);
      expect(runs.get(`checked:${streamId}`)).toBeUndefined();
      expect(await answers('checked', streamId)).toHaveLength(0);

      const reacted = await ping();
      expect(await reactions.waitFor(reacted.position, 5000)).not.toBeNull();
      expect(sent).toHaveLength(2);
      expect(await answers('checked', reacted.streamId)).toHaveLength(1);
    } finally {
      stop();
      await reactions.stop();
    }
  });

  it('retries a failing reaction without holding back the others, and without moving past the failure', async () => {
    const reactions = runner(answering('flaky'), answering('steady'));
    const pinged = await ping();
    failuresLeft.set(`flaky:${pinged.streamId}`, 2);
    await reactions.start();
    try {
      const [flaky, steady] = reactions.workers;
      expect(await steady!.waiters.wait(pinged.position, 5000)).toBe(true);
      expect(await answers('steady', pinged.streamId)).toHaveLength(1);
      await expect.poll(() => flaky!.lastError, { timeout: 5000 }).toBeInstanceOf(Error);
      expect(flaky!.waiters.current).toBeLessThan(pinged.position);
      expect(await flaky!.waiters.wait(pinged.position, 10_000)).toBe(true);
      expect(runs.get(`flaky:${pinged.streamId}`)).toBe(3);
      expect(await answers('flaky', pinged.streamId)).toHaveLength(1);
    } finally {
      await reactions.stop();
    }
  });

  it('resumes from its checkpoint after a restart, and redelivery appends nothing twice', async () => {
    const first = runner(answering('resuming'));
    await first.start();
    const before = await ping();
    expect(await first.waitFor(before.position, 5000)).not.toBeNull();
    await first.stop();

    const after = await ping();
    const second = runner(answering('resuming'));
    await second.start();
    expect(await second.waitFor(after.position, 5000)).not.toBeNull();
    expect(runs.get(`resuming:${before.streamId}`)).toBe(1); // not reacted to again
    expect(await answers('resuming', after.streamId)).toHaveLength(1);
    await second.stop();

    // Redelivery (a crash between the commands and the checkpoint): the commands run again, no event is appended twice.
    await db.pool.query("update reaction_checkpoints set position = 0 where name = 'resuming'");
    const third = runner(answering('resuming'));
    await third.start();
    expect(await third.waitFor(after.position, 10_000)).not.toBeNull();
    await third.stop();
    expect(runs.get(`resuming:${before.streamId}`)).toBe(2);
    expect(await answers('resuming', before.streamId)).toHaveLength(1);
    expect(await answers('resuming', after.streamId)).toHaveLength(1);
  });

  it('two instances of one reaction act once per event', async () => {
    const a = runner(answering('shared'));
    const b = runner(answering('shared'));
    await Promise.all([a.start(), b.start()]);
    try {
      const pings = await Promise.all(Array.from({ length: 20 }, () => ping()));
      const last = pings.reduce((max, p) => (p.position > max ? p.position : max), 0n);
      expect(await a.waitFor(last, 10_000)).not.toBeNull();
      expect(await b.waitFor(last, 10_000)).not.toBeNull();
      for (const p of pings) {
        expect(runs.get(`shared:${p.streamId}`)).toBe(1);
        expect(await answers('shared', p.streamId)).toHaveLength(1);
      }
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });
});
