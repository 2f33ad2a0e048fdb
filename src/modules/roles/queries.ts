import type { Queryable } from '../../platform/db/pool.ts';
import { isUuid } from '../../platform/ids.ts';

export interface Role {
  id: string;
  name: string;
  description: string;
  color: string;
  permissions: string[];
  createdAt: string;
}

interface RoleRow {
  id: string;
  name: string;
  description: string;
  color: string;
  permissions: string[];
  created_at: Date;
}

const toRole = (row: RoleRow): Role => ({
  id: row.id,
  name: row.name,
  description: row.description,
  color: row.color,
  permissions: row.permissions,
  createdAt: row.created_at.toISOString(),
});

const COLUMNS = 'id, name, description, color, permissions, created_at';

export function roleQueries(db: Queryable) {
  return {
    async list(tenant: string): Promise<Role[]> {
      const { rows } = await db.query<RoleRow>(`select ${COLUMNS} from roles where tenant_id = $1 order by name`, [tenant]);
      return rows.map(toRole);
    },
    async get(tenant: string, roleId: string): Promise<Role | null> {
      if (!isUuid(roleId)) return null;
      const { rows } = await db.query<RoleRow>(`select ${COLUMNS} from roles where tenant_id = $1 and id = $2`, [tenant, roleId]);
      return rows[0] ? toRole(rows[0]) : null;
    },
    /** Roles by name, case-insensitively; missing names are simply absent from the answer. */
    async byNames(tenant: string, names: string[]): Promise<Role[]> {
      const { rows } = await db.query<RoleRow>(`select ${COLUMNS} from roles where tenant_id = $1 and lower(name) = any($2::text[])`, [
        tenant,
        names.map((n) => n.toLowerCase()),
      ]);
      return rows.map(toRole);
    },
  };
}

export type RoleQueries = ReturnType<typeof roleQueries>;
