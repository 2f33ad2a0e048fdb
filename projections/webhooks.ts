import type { WebhookCreated, WebhookDeactivated, WebhookDeleted, WebhookSecretRotated, WebhookUpdated } from '../src/modules/webhooks/index.ts';
import { defineProjection } from '../src/platform/projections/projection.ts';

/** Read model `webhooks` (migration 0015), keyed by (tenant_id, id). */
export const webhooksProjection = defineProjection({
  name: 'webhooks',
  tables: ['webhooks'],
  handlers: {
    WebhookCreated: async (event, tx) => {
      const { webhookId, name, url, events, isActive, sealedSecret, secretLastFour } = event.data as WebhookCreated['data'];
      await tx.query(
        `insert into webhooks (tenant_id, id, name, url, events, is_active, sealed_secret, secret_last_four, created_at, updated_at)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9) on conflict do nothing`,
        [event.metadata.tenantId, webhookId, name, url, events, isActive, sealedSecret, secretLastFour, event.metadata.occurredAt],
      );
    },
    WebhookUpdated: async (event, tx) => {
      const { webhookId, name, url, events, isActive } = event.data as WebhookUpdated['data'];
      await tx.query(
        `update webhooks set name = coalesce($3, name), url = coalesce($4, url), events = coalesce($5, events),
                is_active = coalesce($6, is_active), updated_at = $7
          where tenant_id = $1 and id = $2`,
        [event.metadata.tenantId, webhookId, name ?? null, url ?? null, events ?? null, isActive ?? null, event.metadata.occurredAt],
      );
    },
    WebhookSecretRotated: async (event, tx) => {
      const { webhookId, sealedSecret, secretLastFour, previousSealedSecret, previousSecretExpiresAt } = event.data as WebhookSecretRotated['data'];
      await tx.query(
        `update webhooks set sealed_secret = $3, secret_last_four = $4, previous_sealed_secret = $5, previous_secret_expires_at = $6, updated_at = $7
          where tenant_id = $1 and id = $2`,
        [event.metadata.tenantId, webhookId, sealedSecret, secretLastFour, previousSealedSecret, previousSecretExpiresAt, event.metadata.occurredAt],
      );
    },
    WebhookDeactivated: async (event, tx) => {
      const { webhookId } = event.data as WebhookDeactivated['data'];
      await tx.query('update webhooks set is_active = false, updated_at = $3 where tenant_id = $1 and id = $2', [
        event.metadata.tenantId,
        webhookId,
        event.metadata.occurredAt,
      ]);
    },
    WebhookDeleted: async (event, tx) => {
      const { webhookId } = event.data as WebhookDeleted['data'];
      await tx.query('delete from webhooks where tenant_id = $1 and id = $2', [event.metadata.tenantId, webhookId]);
    },
  },
});
