import type { Queryable } from '../../platform/db/pool.ts';
import { isUuid } from '../../platform/ids.ts';
import type { TenantState } from './decider.ts';

export interface Tenant {
  id: string;
  name: string;
  displayName: string;
  createdAt: string;
  updatedAt: string;
}

interface TenantRow {
  id: string;
  name: string;
  display_name: string;
  created_at: Date;
  updated_at: Date;
}

/** The view the read model gives of a tenant just created, from the command's state (no wait for the projection). */
export function createdTenantView(state: TenantState, createdAt: string): Tenant {
  if (state.status !== 'active') throw new Error('A created tenant is active');
  const at = new Date(createdAt).toISOString();
  return { id: state.tenantId, name: state.name, displayName: state.displayName, createdAt: at, updatedAt: at };
}

const toTenant = (row: TenantRow): Tenant => ({
  id: row.id,
  name: row.name,
  displayName: row.display_name,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
});

const COLUMNS = 'id, name, display_name, created_at, updated_at';

export function tenantQueries(db: Queryable) {
  return {
    async findByName(name: string): Promise<Tenant | null> {
      const { rows } = await db.query<TenantRow>(`select ${COLUMNS} from tenants where name = $1 and deleted_at is null`, [name]);
      return rows[0] ? toTenant(rows[0]) : null;
    },
    /** By id, or by name: admins address tenants by either. */
    async find(idOrName: string): Promise<Tenant | null> {
      const byId = isUuid(idOrName);
      const { rows } = await db.query<TenantRow>(
        `select ${COLUMNS} from tenants where ${byId ? 'id' : 'name'} = $1 and deleted_at is null`,
        [byId ? idOrName : idOrName.toLowerCase()],
      );
      return rows[0] ? toTenant(rows[0]) : null;
    },
    async list(): Promise<Tenant[]> {
      const { rows } = await db.query<TenantRow>(`select ${COLUMNS} from tenants where deleted_at is null order by name`);
      return rows.map(toTenant);
    },
  };
}

export type TenantQueries = ReturnType<typeof tenantQueries>;
