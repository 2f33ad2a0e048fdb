import { fileURLToPath } from 'node:url';
import { runner } from 'node-pg-migrate';
import type pg from 'pg';
import type { Pool } from './pool.ts';

export const MIGRATIONS_DIR = fileURLToPath(new URL('../../../migrations', import.meta.url));

/**
 * Applies every pending SQL migration in migrations/ (node-pg-migrate keeps the ledger in
 * `pgmigrations` and holds an advisory lock, so concurrent starts do not race).
 */
export async function migrate(client: pg.Client | pg.PoolClient): Promise<void> {
  await runner({
    dbClient: client,
    dir: MIGRATIONS_DIR,
    direction: 'up',
    migrationsTable: 'pgmigrations',
    checkOrder: true,
    log: () => undefined,
  });
}

/** Migrates through one client of the pool. */
export async function migratePool(pool: Pool): Promise<void> {
  const client = await pool.connect();
  try {
    await migrate(client);
  } finally {
    client.release();
  }
}
