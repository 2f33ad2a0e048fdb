import type { Queryable } from '../../platform/db/pool.ts';
import { isUuid } from '../../platform/ids.ts';
import { maskedSecret } from './signing.ts';

/** A subscription as every read shows it: the secret masked. */
export interface Webhook {
  id: string;
  name: string;
  url: string;
  events: string[];
  signingSecret: string;
  isActive: boolean;
  createdAt: string;
  updatedAt: string;
}

/** What the delivery engine needs to sign and send: the sealed secrets, never shown. */
export interface WebhookTarget {
  id: string;
  url: string;
  isActive: boolean;
  sealedSecret: string;
  previousSealedSecret: string | null;
  previousSecretExpiresAt: Date | null;
}

interface WebhookRow {
  id: string;
  name: string;
  url: string;
  events: string[];
  is_active: boolean;
  sealed_secret: string;
  secret_last_four: string;
  previous_sealed_secret: string | null;
  previous_secret_expires_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const toWebhook = (row: WebhookRow): Webhook => ({
  id: row.id,
  name: row.name,
  url: row.url,
  events: row.events,
  signingSecret: maskedSecret(row.secret_last_four),
  isActive: row.is_active,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
});

/** An active subscription as fan-out needs it. */
export interface WebhookSubscriber {
  id: string;
  events: string[];
  createdAt: Date;
}

/** Reads of the webhooks read model; every query is scoped to one tenant. */
export function webhookQueries(db: Queryable) {
  async function row(tenant: string, id: string): Promise<WebhookRow | null> {
    if (!isUuid(id)) return null;
    const { rows } = await db.query<WebhookRow>('select * from webhooks where tenant_id = $1 and id = $2', [tenant, id]);
    return rows[0] ?? null;
  }
  return {
    async list(tenant: string): Promise<Webhook[]> {
      const { rows } = await db.query<WebhookRow>('select * from webhooks where tenant_id = $1 order by created_at, id', [tenant]);
      return rows.map(toWebhook);
    },
    async get(tenant: string, id: string): Promise<Webhook | null> {
      const found = await row(tenant, id);
      return found ? toWebhook(found) : null;
    },
    /** The tenant's subscriptions among `ids` (one query for a claim's deliveries), by id. */
    async targets(tenant: string, ids: string[]): Promise<Map<string, WebhookTarget>> {
      const { rows } = await db.query<WebhookRow>('select * from webhooks where tenant_id = $1 and id = any($2::uuid[])', [tenant, ids.filter(isUuid)]);
      return new Map(
        rows.map((found) => [
          found.id,
          {
            id: found.id,
            url: found.url,
            isActive: found.is_active,
            sealedSecret: found.sealed_secret,
            previousSealedSecret: found.previous_sealed_secret,
            previousSecretExpiresAt: found.previous_secret_expires_at,
          },
        ]),
      );
    },
    /** The tenant's active subscriptions: the event types each takes ('*': all) and its creation time. */
    async active(tenant: string): Promise<WebhookSubscriber[]> {
      const { rows } = await db.query<{ id: string; events: string[]; created_at: Date }>(
        'select id, events, created_at from webhooks where tenant_id = $1 and is_active',
        [tenant],
      );
      return rows.map((r) => ({ id: r.id, events: r.events, createdAt: r.created_at }));
    },
  };
}

export type WebhookQueries = ReturnType<typeof webhookQueries>;
