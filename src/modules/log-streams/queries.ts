import type { Queryable } from '../../platform/db/pool.ts';
import { isUuid } from '../../platform/ids.ts';
import type { LogStreamStatus, LogStreamType } from './events.ts';

/** A stream as reads show it: the configuration masked. */
export interface LogStream {
  id: string;
  name: string;
  type: LogStreamType;
  status: LogStreamStatus;
  config: Record<string, unknown>;
  eventFilters: string[] | null;
  createdAt: string;
  updatedAt: string;
}

/** What a delivery needs: the sealed configuration, never shown. */
export interface LogStreamTarget {
  id: string;
  type: LogStreamType;
  status: LogStreamStatus;
  sealedConfig: string;
}

interface LogStreamRow {
  id: string;
  name: string;
  type: LogStreamType;
  status: LogStreamStatus;
  config: Record<string, unknown>;
  sealed_config: string;
  event_filters: string[] | null;
  created_at: Date;
  updated_at: Date;
}

const toLogStream = (row: LogStreamRow): LogStream => ({
  id: row.id,
  name: row.name,
  type: row.type,
  status: row.status,
  config: row.config,
  eventFilters: row.event_filters,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
});

/** An active stream as fan-out needs it. */
export interface ActiveLogStream {
  id: string;
  eventFilters: string[] | null;
  createdAt: Date;
}

/** Reads of the log_streams read model; every query is scoped to one tenant. */
export function logStreamQueries(db: Queryable) {
  async function row(tenant: string, id: string): Promise<LogStreamRow | null> {
    if (!isUuid(id)) return null;
    const { rows } = await db.query<LogStreamRow>('select * from log_streams where tenant_id = $1 and id = $2', [tenant, id]);
    return rows[0] ?? null;
  }
  return {
    async list(tenant: string): Promise<LogStream[]> {
      const { rows } = await db.query<LogStreamRow>('select * from log_streams where tenant_id = $1 order by created_at, id', [tenant]);
      return rows.map(toLogStream);
    },
    async get(tenant: string, id: string): Promise<LogStream | null> {
      const found = await row(tenant, id);
      return found ? toLogStream(found) : null;
    },
    async target(tenant: string, id: string): Promise<LogStreamTarget | null> {
      const found = await row(tenant, id);
      return found && { id: found.id, type: found.type, status: found.status, sealedConfig: found.sealed_config };
    },
    /** Active streams of the tenant, with their filters and creation times. */
    async active(tenant: string): Promise<ActiveLogStream[]> {
      const { rows } = await db.query<{ id: string; event_filters: string[] | null; created_at: Date }>(
        `select id, event_filters, created_at from log_streams where tenant_id = $1 and status = 'active'`,
        [tenant],
      );
      return rows.map((r) => ({ id: r.id, eventFilters: r.event_filters, createdAt: r.created_at }));
    },
  };
}

export type LogStreamQueries = ReturnType<typeof logStreamQueries>;
