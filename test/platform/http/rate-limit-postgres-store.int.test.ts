import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/platform/clock.ts';
import { PostgresRateLimitStore } from '../../../src/platform/http/rate-limit/postgres-store.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { rateLimitStoreContract } from './rate-limit-store-contract.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(() => db.drop());

const logger = pino({ level: 'silent' });

rateLimitStoreContract('PostgreSQL', async (clock) => new PostgresRateLimitStore(db.pool, clock, logger));

describe('PostgreSQL rate-limit store', () => {
  it('shares the counts between instances on one database', async () => {
    const clock = new ManualClock();
    const [one, two] = [new PostgresRateLimitStore(db.pool, clock, logger), new PostgresRateLimitStore(db.pool, clock, logger)];
    await Promise.all([one.hit('shared', 60_000), two.hit('shared', 60_000), one.hit('shared', 60_000)]);
    expect((await two.hit('shared', 60_000)).counts.current).toBe(4);
    await Promise.all([one.close(), two.close()]);
  });

  it('cleans up the rows whose windows are over', async () => {
    const clock = new ManualClock(new Date('2027-01-01T00:00:00Z'));
    const store = new PostgresRateLimitStore(db.pool, clock, logger);
    await store.hit('cleanup:short', 1_000);
    await store.hit('cleanup:long', 60_000);
    clock.advance(2_000);
    await store.cleanup();
    const { rows } = await db.pool.query<{ key: string }>("select key from rate_limits where key like 'cleanup:%'");
    expect(rows.map((row) => row.key)).toEqual(['cleanup:long']);
    await store.close();
  });
});
