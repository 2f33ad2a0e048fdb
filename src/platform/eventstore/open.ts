import type { Config } from '../../config.ts';
import type { Pool } from '../db/pool.ts';
import type { EventStore } from './port.ts';
import { PostgresEventStore } from './postgres.ts';

/** The PostgreSQL store by default; KurrentDB when KURRENTDB_CONNECTION_STRING is set. */
export async function openEventStore(config: Config, pool: Pool): Promise<EventStore> {
  if (config.KURRENTDB_CONNECTION_STRING) {
    const { KurrentEventStore } = await import('./kurrentdb.ts');
    return KurrentEventStore.connect(config.KURRENTDB_CONNECTION_STRING);
  }
  return new PostgresEventStore(pool, { pollIntervalMs: config.SUBSCRIPTION_POLL_MS });
}
