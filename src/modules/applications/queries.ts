import type { Queryable } from '../../platform/db/pool.ts';
import { isUuid } from '../../platform/ids.ts';
import type { ApplicationType } from './events.ts';

/** An application as the admin API shows it (the secret is never shown after creation). */
export interface ApplicationView {
  id: string;
  clientId: string;
  name: string;
  type: ApplicationType;
  redirectUris: string[];
  postLogoutRedirectUris: string[];
  allowedOrigins: string[];
  grantTypes: string[];
  scopes: string[];
  createdAt: string;
  updatedAt: string;
}

interface ApplicationRow {
  id: string;
  client_id: string;
  name: string;
  type: ApplicationType;
  redirect_uris: string[];
  post_logout_redirect_uris: string[];
  allowed_origins: string[];
  grant_types: string[];
  scopes: string[];
  created_at: Date;
  updated_at: Date;
}

const toView = (row: ApplicationRow): ApplicationView => ({
  id: row.id,
  clientId: row.client_id,
  name: row.name,
  type: row.type,
  redirectUris: row.redirect_uris,
  postLogoutRedirectUris: row.post_logout_redirect_uris,
  allowedOrigins: row.allowed_origins,
  grantTypes: row.grant_types,
  scopes: row.scopes,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
});

/** Reads of the applications read model; every query but the CORS lookup is scoped to one tenant. */
export function applicationQueries(db: Queryable) {
  return {
    async list(tenant: string, page: number, limit: number): Promise<{ items: ApplicationView[]; total: number }> {
      const { rows } = await db.query<ApplicationRow & { total: string }>(
        'select *, count(*) over () as total from applications where tenant_id = $1 order by created_at, id limit $2 offset $3',
        [tenant, limit, (page - 1) * limit],
      );
      const total = rows[0] ? Number(rows[0].total) : Number((await db.query<{ n: string }>('select count(*) as n from applications where tenant_id = $1', [tenant])).rows[0]!.n);
      return { items: rows.map(toView), total };
    },
    async get(tenant: string, id: string): Promise<ApplicationView | null> {
      if (!isUuid(id)) return null;
      const { rows } = await db.query<ApplicationRow>('select * from applications where tenant_id = $1 and id = $2', [tenant, id]);
      return rows[0] ? toView(rows[0]) : null;
    },
    /**
     * Whether an origin is registered by an application of `tenant`, or (tenant null: a preflight,
     * which carries no tenant) by any application: the tenant then comes from the Origin.
     */
    async originRegistered(origin: string, tenant: string | null): Promise<boolean> {
      const { rows } = await db.query(
        'select 1 from applications where allowed_origins @> array[$1]::text[] and ($2::text is null or tenant_id = $2) limit 1',
        [origin, tenant],
      );
      return rows.length > 0;
    },
  };
}

export type ApplicationQueries = ReturnType<typeof applicationQueries>;
