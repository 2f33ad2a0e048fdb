import type { Pool } from '../db/pool.ts';
import type { EventStore } from './port.ts';
import { PostgresEventStore } from './postgres.ts';

export interface EventStoreSettings {
  /** KurrentDB instead of the PostgreSQL store when set. */
  kurrentdbConnectionString?: string;
  /** Fallback poll of PostgreSQL subscribers when no notification arrives. */
  pollIntervalMs: number;
}

/** The PostgreSQL store by default; KurrentDB when a connection string is given. */
export async function openEventStore(settings: EventStoreSettings, pool: Pool): Promise<EventStore> {
  if (settings.kurrentdbConnectionString) {
    const { KurrentEventStore } = await import('./kurrentdb.ts');
    return KurrentEventStore.connect(settings.kurrentdbConnectionString);
  }
  return new PostgresEventStore(pool, { pollIntervalMs: settings.pollIntervalMs });
}
