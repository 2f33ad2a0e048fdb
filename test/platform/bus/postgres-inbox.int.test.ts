import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresInbox } from '../../../src/platform/bus/postgres-inbox.ts';
import type { PoolClient } from '../../../src/platform/db/pool.ts';
import { newId } from '../../../src/platform/ids.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';

describe('PostgresInbox', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    await db.pool.query('create table inbox_effects (event_id text not null)');
  });
  afterAll(async () => {
    await db.drop();
  });

  /** The effect under test: a row in the inbox's transaction. */
  const recordEffect = (eventId: string) => async (tx: PoolClient) => {
    await tx.query('insert into inbox_effects (event_id) values ($1)', [eventId]);
  };
  const effectsOf = async (eventId: string) =>
    Number((await db.pool.query('select count(*) from inbox_effects where event_id = $1', [eventId])).rows[0].count);

  it('applies an event once per group, also through a new inbox (a restart)', async () => {
    const eventId = newId();
    const effect = recordEffect(eventId);

    expect(await new PostgresInbox(db.pool).runOnce('webhooks', eventId, effect)).toBe(true);
    expect(await new PostgresInbox(db.pool).runOnce('webhooks', eventId, effect)).toBe(false);
    expect(await new PostgresInbox(db.pool).runOnce('log-streams', eventId, effect)).toBe(true);
    expect(await effectsOf(eventId)).toBe(2);
  });

  it('commits the effect and the inbox row together: a failing effect leaves neither', async () => {
    const inbox = new PostgresInbox(db.pool);
    const eventId = newId();
    await expect(
      inbox.runOnce('webhooks', eventId, async (tx) => {
        await recordEffect(eventId)(tx);
        throw new Error('endpoint down');
      }),
    ).rejects.toThrow('endpoint down');
    expect(await effectsOf(eventId)).toBe(0);

    expect(await inbox.runOnce('webhooks', eventId, recordEffect(eventId))).toBe(true);
    expect(await effectsOf(eventId)).toBe(1);
  });

  it('lets concurrent deliveries of one event apply it once', async () => {
    const inbox = new PostgresInbox(db.pool);
    const eventId = newId();
    const outcomes = await Promise.all(
      Array.from({ length: 8 }, () =>
        inbox.runOnce('webhooks', eventId, async (tx) => {
          await recordEffect(eventId)(tx);
          await tx.query('select pg_sleep(0.05)');
        }),
      ),
    );
    expect(outcomes.filter(Boolean)).toHaveLength(1);
    expect(await effectsOf(eventId)).toBe(1);
  });

  it('applies a batch once per event: only the events not applied yet reach the effect, in one transaction with their rows', async () => {
    const inbox = new PostgresInbox(db.pool);
    const [a, b, c] = [newId(), newId(), newId()];
    await inbox.runOnce('batch', a, recordEffect(a));
    const applyEach = (fresh: ReadonlySet<string>, tx: PoolClient) => Promise.all([...fresh].map((id) => recordEffect(id)(tx))).then(() => undefined);

    expect(await inbox.runOnceEach('batch', [a, b, b, c], applyEach)).toBe(2);
    expect(await inbox.runOnceEach('batch', [c, b, a], applyEach)).toBe(0);
    expect([await effectsOf(a), await effectsOf(b), await effectsOf(c)]).toEqual([1, 1, 1]);

    const d = newId();
    await expect(
      inbox.runOnceEach('batch', [d], async (fresh, tx) => {
        await applyEach(fresh, tx);
        throw new Error('queue unavailable');
      }),
    ).rejects.toThrow('queue unavailable');
    expect(await effectsOf(d)).toBe(0);
    expect(await inbox.runOnceEach('batch', [d], applyEach)).toBe(1);
  });
});

