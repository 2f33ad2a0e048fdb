import type { Logger } from 'pino';
import type { Config } from '../../config.ts';
import { startEmbeddedPostgres } from './embedded-postgres.ts';
import { migratePool } from './migrate.ts';
import { createPool, type Pool } from './pool.ts';

/** DATABASE_URL, or the embedded PostgreSQL in DATA_DIR; migrated before use. */
export async function openDatabase(config: Config, logger: Logger): Promise<{ pool: Pool; close(): Promise<void> }> {
  const embedded = config.DATABASE_URL
    ? null
    : await startEmbeddedPostgres({ dataDir: config.DATA_DIR, port: config.EMBEDDED_POSTGRES_PORT, logger });
  const pool = createPool(config.DATABASE_URL ?? embedded!.url, config.DATABASE_POOL_SIZE);
  await migratePool(pool);
  return {
    pool,
    async close() {
      await pool.end();
      await embedded?.stop();
    },
  };
}
