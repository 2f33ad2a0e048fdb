import type { LogStreamCreated, LogStreamDeleted, LogStreamStatusChanged, LogStreamUpdated } from '../src/modules/log-streams/index.ts';
import { defineProjection } from '../src/platform/projections/projection.ts';

/** Read model `log_streams` (migration 0016), keyed by (tenant_id, id). */
export const logStreamsProjection = defineProjection({
  name: 'log-streams',
  tables: ['log_streams'],
  handlers: {
    LogStreamCreated: async (event, tx) => {
      const { logStreamId, name, type, config, sealedConfig, eventFilters } = event.data as LogStreamCreated['data'];
      await tx.query(
        `insert into log_streams (tenant_id, id, name, type, status, config, sealed_config, event_filters, created_at, updated_at)
         values ($1, $2, $3, $4, 'active', $5, $6, $7, $8, $8) on conflict do nothing`,
        [event.metadata.tenantId, logStreamId, name, type, config, sealedConfig, eventFilters, event.metadata.occurredAt],
      );
    },
    LogStreamUpdated: async (event, tx) => {
      const { logStreamId, name, config, sealedConfig, eventFilters } = event.data as LogStreamUpdated['data'];
      await tx.query(
        `update log_streams set name = coalesce($3, name), config = coalesce($4, config), sealed_config = coalesce($5, sealed_config),
                event_filters = case when $6 then $7 else event_filters end, updated_at = $8
          where tenant_id = $1 and id = $2`,
        [event.metadata.tenantId, logStreamId, name ?? null, config ?? null, sealedConfig ?? null, eventFilters !== undefined, eventFilters ?? null, event.metadata.occurredAt],
      );
    },
    LogStreamStatusChanged: async (event, tx) => {
      const { logStreamId, status } = event.data as LogStreamStatusChanged['data'];
      await tx.query('update log_streams set status = $3, updated_at = $4 where tenant_id = $1 and id = $2', [
        event.metadata.tenantId,
        logStreamId,
        status,
        event.metadata.occurredAt,
      ]);
    },
    LogStreamDeleted: async (event, tx) => {
      const { logStreamId } = event.data as LogStreamDeleted['data'];
      await tx.query('delete from log_streams where tenant_id = $1 and id = $2', [event.metadata.tenantId, logStreamId]);
    },
  },
});
