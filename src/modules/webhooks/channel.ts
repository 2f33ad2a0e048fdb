import type { Logger } from 'pino';
import type { PublicEvent } from '../../platform/bus/port.ts';
import { systemContext } from '../../platform/commands/context.ts';
import type { Clock } from '../../platform/clock.ts';
import type { SecretBox } from '../../platform/crypto/secret-box.ts';
import type { EventStore } from '../../platform/eventstore/port.ts';
import type { Mailer } from '../../platform/mail/port.ts';
import type { OutboundChannel } from '../../platform/outbound/engine.ts';
import type { ClaimedDelivery } from '../../platform/outbound/queue.ts';
import type { WebhookCommands } from './commands.ts';
import { webhookTypeOf } from '../audit/index.ts';
import { needsHistory, webhookData } from './payloads.ts';
import type { WebhookQueries, WebhookSubscriber } from './queries.ts';
import { signatureHeaders, signingKey } from './signing.ts';

/** Consecutive failed deliveries (retry schedule exhausted) after which a subscription is deactivated (spec, Limits). */
export const FAILURES_BEFORE_DEACTIVATION = 10;

const USER_AGENT = 'IAM-Webhooks/1.0';

/** The type of the event POST /api/webhooks/{id}/test sends. */
export const TEST_WEBHOOK_TYPE = 'webhook.test';

/** The body every attempt of a delivery sends: `{id, type, timestamp, data}` (spec, Webhook events). */
export const webhookBody = (id: string, type: string, timestamp: string, data: unknown): string => JSON.stringify({ id, type, timestamp, data });

export interface WebhookChannelDeps {
  store: EventStore;
  queries: WebhookQueries;
  /** The tenant's active subscriptions as of the event (or later). */
  subscribers(event: PublicEvent): Promise<WebhookSubscriber[]>;
  commands: WebhookCommands;
  secretBox: SecretBox;
  clock: Clock;
  mailer: Mailer;
  /** Addresses of the tenant's administrators, told when a subscription is deactivated. */
  adminEmails(tenant: string): Promise<string[]>;
  /** Waits before retries 1, 2 ... (IAM_WEBHOOK_RETRY_SCHEDULE); none left after the last. */
  retrySchedule: number[];
  logger: Logger;
}

const idsOfTenant = (deliveries: readonly ClaimedDelivery[], tenantId: string) => [
  ...new Set(deliveries.filter((delivery) => delivery.tenantId === tenantId).map((delivery) => delivery.targetId)),
];

/** Webhooks on the delivery engine: which subscriptions an event goes to, and how an attempt is signed. */
export function webhookChannel(deps: WebhookChannelDeps): OutboundChannel {
  async function notifyAdmins(delivery: ClaimedDelivery, failures: number): Promise<void> {
    const webhook = await deps.queries.get(delivery.tenantId, delivery.targetId);
    const recipients = await deps.adminEmails(delivery.tenantId);
    const text = [
      `The webhook subscription "${webhook?.name ?? delivery.targetId}" (${webhook?.url ?? 'deleted'}) of tenant ${delivery.tenantId}`,
      `was deactivated after ${failures} consecutive failed deliveries. It receives no events until it is`,
      'reactivated (PUT /api/webhooks/{id} with isActive true); its delivery log shows the failures.',
    ].join('\n');
    for (const to of recipients) {
      await deps.mailer.send({ to, subject: 'A webhook subscription was deactivated', text }).catch((error: unknown) => {
        deps.logger.error({ err: error, webhookId: delivery.targetId }, 'could not tell an administrator about a deactivated webhook');
      });
    }
  }

  return {
    name: 'webhooks',

    takes: (eventType) => webhookTypeOf(eventType) !== null,

    async fanOut(event, memo) {
      const type = webhookTypeOf(event.type);
      if (!type) return [];
      const subscribedTo = async (to: PublicEvent, webhookType: string) =>
        (await deps.subscribers(to)).filter((subscriber) => subscriber.events.includes('*') || subscriber.events.includes(webhookType));
      const subscribed = await subscribedTo(event, type);
      // Events from before a subscription existed are not sent to it.
      const occurredAt = new Date(event.occurredAt);
      const targets = subscribed.filter((subscription) => subscription.createdAt <= occurredAt).map((subscription) => subscription.id);
      if (targets.length === 0) return [];
      // The streams of every event of the batch whose data is a snapshot and someone takes: one read.
      const readStream = async (streamId: string) => {
        const streams = await memo.get('streams', async () => {
          const wanted = new Set<string>();
          for (const batched of memo.items) {
            const batchedType = webhookTypeOf(batched.type);
            if (batchedType && needsHistory(batchedType) && (await subscribedTo(batched, batchedType)).length > 0) wanted.add(batched.streamId);
          }
          const ids = [...wanted];
          const read = await deps.store.readStreams(ids);
          return new Map(ids.map((id, i) => [id, read[i]!]));
        });
        return streams.get(streamId) ?? deps.store.readStream(streamId);
      };
      const payload = webhookBody(event.id, type, event.occurredAt, await webhookData(readStream, type, event));
      return targets.map((targetId) => ({ tenantId: event.tenantId, targetId, eventType: type, payload }));
    },

    async prepare(delivery, memo) {
      // The claim's subscriptions of this tenant in one read, each secret unsealed once per claim.
      const signer = await memo.get(`${delivery.tenantId}\n${delivery.targetId}`, async () => {
        const targets = await memo.get(delivery.tenantId, () => deps.queries.targets(delivery.tenantId, idsOfTenant(memo.items, delivery.tenantId)));
        const target = targets.get(delivery.targetId);
        if (!target) return null;
        const now = deps.clock.now();
        const keys = [signingKey(deps.secretBox.open(target.sealedSecret))];
        if (target.previousSealedSecret && target.previousSecretExpiresAt && target.previousSecretExpiresAt > now) {
          keys.push(signingKey(deps.secretBox.open(target.previousSealedSecret)));
        }
        return { target, keys };
      });
      // A test event reaches an inactive subscription too: that is how one checks it before reactivating.
      if (!signer || (!signer.target.isActive && delivery.eventType !== TEST_WEBHOOK_TYPE)) return null;
      const { target, keys } = signer;
      const now = deps.clock.now();
      return {
        url: target.url,
        body: delivery.payload,
        headers: {
          'content-type': 'application/json',
          'user-agent': USER_AGENT,
          'x-webhook-id': delivery.eventId,
          ...signatureHeaders(keys, now, delivery.payload),
        },
      };
    },

    retryDelayMs: (attempt) => deps.retrySchedule[attempt - 1] ?? null,

    failureThreshold: FAILURES_BEFORE_DEACTIVATION,

    async onTargetFailing(delivery, failures) {
      const deactivated = await deps.commands.deactivate(delivery.tenantId, delivery.targetId, failures, systemContext(delivery.tenantId));
      if (deactivated) await notifyAdmins(delivery, failures);
      return deactivated;
    },
  };
}
