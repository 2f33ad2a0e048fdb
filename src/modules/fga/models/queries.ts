import type { Queryable } from '../../../platform/db/pool.ts';
import { isUuid } from '../../../platform/ids.ts';
import type { AuthorizationSchema } from '../schema.ts';
import type { ModelState } from './decider.ts';

/** The projection that writes fga_models (projections/fga.ts). */
export const FGA_PROJECTION = 'fga';

export interface ModelSummary {
  id: string;
  name: string;
  version: number;
  isActive: boolean;
  createdAt: string;
  updatedAt: string;
}

export interface Model extends ModelSummary {
  dsl: string;
  schema: AuthorizationSchema;
}

interface ModelRow {
  id: string;
  name: string;
  version: number;
  is_active: boolean;
  created_at: Date;
  updated_at: Date;
  dsl?: string;
  schema?: AuthorizationSchema;
}

const toSummary = (row: ModelRow): ModelSummary => ({
  id: row.id,
  name: row.name,
  version: row.version,
  isActive: row.is_active,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
});

/** The view the read model gives of a model just created, from the command's state (no wait for the projection). */
export function createdModelView(model: ModelState, createdAt: string): Model {
  const at = new Date(createdAt).toISOString();
  const { modelId: id, name, version, dsl, schema } = model;
  return { id, name, version, isActive: model.status === 'active', createdAt: at, updatedAt: at, dsl, schema };
}

const SUMMARY = 'id, name, version, is_active, created_at, updated_at';

export function modelQueries(db: Queryable) {
  return {
    /** Newest version first. */
    async list(tenant: string, page: { page: number; limit: number }): Promise<ModelSummary[]> {
      const { rows } = await db.query<ModelRow>(
        `select ${SUMMARY} from fga_models where tenant_id = $1 order by version desc limit $2 offset $3`,
        [tenant, page.limit, (page.page - 1) * page.limit],
      );
      return rows.map(toSummary);
    },

    async get(tenant: string, modelId: string): Promise<Model | null> {
      if (!isUuid(modelId)) return null;
      const { rows } = await db.query<ModelRow>(`select ${SUMMARY}, dsl, schema from fga_models where tenant_id = $1 and id = $2`, [
        tenant,
        modelId,
      ]);
      const row = rows[0];
      return row ? { ...toSummary(row), dsl: row.dsl!, schema: row.schema! } : null;
    },
  };
}

export type ModelQueries = ReturnType<typeof modelQueries>;
