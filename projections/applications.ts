import type { ApplicationCreated, ApplicationDeleted, ApplicationUpdated } from '../src/modules/applications/index.ts';
import { defineProjection } from '../src/platform/projections/projection.ts';

/** Read model `applications` (migration 0016), keyed by (tenant_id, id). */
export const applicationsProjection = defineProjection({
  name: 'applications',
  tables: ['applications'],
  handlers: {
    ApplicationCreated: async (event, tx) => {
      const d = event.data as ApplicationCreated['data'];
      await tx.query(
        `insert into applications (tenant_id, id, client_id, name, type, redirect_uris, post_logout_redirect_uris, allowed_origins, grant_types, scopes, created_at, updated_at)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11) on conflict do nothing`,
        [event.metadata.tenantId, d.applicationId, d.clientId, d.name, d.type, d.redirectUris, d.postLogoutRedirectUris, d.allowedOrigins, d.grantTypes, d.scopes, event.metadata.occurredAt],
      );
    },
    ApplicationUpdated: async (event, tx) => {
      const d = event.data as ApplicationUpdated['data'];
      await tx.query(
        `update applications set name = coalesce($3, name), redirect_uris = coalesce($4, redirect_uris),
                post_logout_redirect_uris = coalesce($5, post_logout_redirect_uris), allowed_origins = coalesce($6, allowed_origins),
                grant_types = coalesce($7, grant_types), scopes = coalesce($8, scopes), updated_at = $9
          where tenant_id = $1 and id = $2`,
        [
          event.metadata.tenantId,
          d.applicationId,
          d.name ?? null,
          d.redirectUris ?? null,
          d.postLogoutRedirectUris ?? null,
          d.allowedOrigins ?? null,
          d.grantTypes ?? null,
          d.scopes ?? null,
          event.metadata.occurredAt,
        ],
      );
    },
    ApplicationSecretRotated: async (event, tx) => {
      const { applicationId } = event.data as { applicationId: string };
      await tx.query('update applications set updated_at = $3 where tenant_id = $1 and id = $2', [event.metadata.tenantId, applicationId, event.metadata.occurredAt]);
    },
    ApplicationDeleted: async (event, tx) => {
      const { applicationId } = event.data as ApplicationDeleted['data'];
      await tx.query('delete from applications where tenant_id = $1 and id = $2', [event.metadata.tenantId, applicationId]);
    },
  },
});
