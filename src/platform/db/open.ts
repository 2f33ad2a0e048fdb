import type { Logger } from 'pino';
import { startEmbeddedPostgres } from './embedded-postgres.ts';
import { migratePool } from './migrate.ts';
import { createPool, type Pool } from './pool.ts';

export interface DatabaseSettings {
  /** An external PostgreSQL; unset starts the embedded one. */
  url?: string;
  poolSize: number;
  embedded: { dataDir: string; port: number };
}

/** The given PostgreSQL, or the embedded one; migrated before use. */
export async function openDatabase(settings: DatabaseSettings, logger: Logger): Promise<{ pool: Pool; close(): Promise<void> }> {
  const embedded = settings.url ? null : await startEmbeddedPostgres({ ...settings.embedded, logger });
  const pool = createPool(settings.url ?? embedded!.url, settings.poolSize);
  await migratePool(pool);
  return {
    pool,
    async close() {
      await pool.end();
      await embedded?.stop();
    },
  };
}
