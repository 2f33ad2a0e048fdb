import { tenantTargetsAt } from '../../platform/bus/tenant-targets.ts';
import type { CommandContext } from '../../platform/commands/context.ts';
import { notFound } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import type { Mailer } from '../../platform/mail/port.ts';
import { OutboundEngine } from '../../platform/outbound/engine.ts';
import { assertDeliverable, type OutboundFeatureDeps } from '../../platform/outbound/feature.ts';
import type { DeliveryRecord } from '../../platform/outbound/queue.ts';
import { TEST_WEBHOOK_TYPE, webhookChannel, webhookBody } from './channel.ts';
import { webhookCommands } from './commands.ts';
import type { WebhookSettings } from './events.ts';
import { webhookError } from './errors.ts';
import { webhookQueries, type WebhookQueries } from './queries.ts';

export interface WebhooksModuleDeps extends OutboundFeatureDeps {
  /** The read model's queries (wrapped for read-your-writes by the composition root). */
  queries: WebhookQueries;
  mailer: Mailer;
  adminEmails(tenant: string): Promise<string[]>;
  retrySchedule: number[];
}

/** The delivery log's statuses: a delivery dropped because its subscription went away shows as failed. */
const asLogEntry = ({ status, ...delivery }: DeliveryRecord) => ({ ...delivery, status: status === 'cancelled' ? 'failed' : status });

/** Webhook subscriptions (commands, read model) and their deliveries on the outbound engine. */
export function webhooksModule(deps: WebhooksModuleDeps) {
  const { queries } = deps;
  const commands = webhookCommands(deps);
  // The engine takes its bus, pool, client, clock, metrics and timeout from the module's dependencies.
  const subscribers = tenantTargetsAt(deps.readModels, { projection: 'webhooks', load: (tenant) => webhookQueries(deps.pool).active(tenant), timeoutMs: deps.readModelTimeoutMs });
  const channel = webhookChannel({ ...deps, queries, subscribers, commands, logger: deps.logger.child({ component: 'webhooks' }) });
  const engine = new OutboundEngine({ ...deps, channel });
  const existing = async (tenant: string, webhookId: string) => (await queries.get(tenant, webhookId)) ?? Promise.reject(notFound('Webhook'));

  return {
    commands: {
      async create(tenant: string, settings: WebhookSettings, context: CommandContext) {
        await assertDeliverable(deps.client, settings.url, 'url');
        return commands.create(tenant, settings, context);
      },
      async update(tenant: string, webhookId: string, changes: Partial<WebhookSettings>, context: CommandContext) {
        const before = await existing(tenant, webhookId);
        if (changes.url) await assertDeliverable(deps.client, changes.url, 'url');
        const result = await commands.update(tenant, webhookId, changes, context);
        // Reactivated: the failures that deactivated it no longer count. Deactivated: what waits is dropped.
        if (changes.isActive && !before.isActive) await engine.queue.resetFailures(webhookId);
        if (changes.isActive === false && before.isActive) await engine.queue.cancelWaiting(webhookId, 'the subscription was deactivated');
        return result;
      },
      async delete(tenant: string, webhookId: string, context: CommandContext) {
        const result = await commands.delete(tenant, webhookId, context);
        await engine.queue.cancelWaiting(webhookId, 'the subscription was deleted');
        return result;
      },
      rotateSecret: commands.rotateSecret,
    },
    queries,

    async deliveries(tenant: string, webhookId: string, page: number, limit: number) {
      await existing(tenant, webhookId);
      const { items, total } = await engine.queue.listForTarget(tenant, webhookId, page, limit);
      return { items: items.map(asLogEntry), total };
    },

    /** Attempts a failed delivery again now (its attempt count goes on). */
    async retry(tenant: string, webhookId: string, deliveryId: string) {
      await existing(tenant, webhookId);
      const delivery = await engine.queue.get(tenant, webhookId, deliveryId);
      if (!delivery) throw notFound('Delivery');
      if (!(await engine.queue.retryNow(tenant, webhookId, deliveryId, deps.clock.now()))) {
        throw webhookError('DELIVERY_NOT_FAILED', 'Only a failed delivery can be retried; this one is delivered or still has attempts scheduled');
      }
      engine.wake();
      return asLogEntry((await engine.queue.get(tenant, webhookId, deliveryId))!);
    },

    /** Sends a `webhook.test` event to the subscription (even an inactive one). */
    async sendTest(tenant: string, webhookId: string) {
      await existing(tenant, webhookId);
      const eventId = newId();
      const now = deps.clock.now();
      const payload = webhookBody(eventId, TEST_WEBHOOK_TYPE, now.toISOString(), { webhookId, message: 'This is a test event' });
      // Sent at once even while the subscription's circuit is open: a test event is how one checks a receiver.
      const [deliveryId] = await engine.queue.enqueue(deps.pool, [{ tenantId: tenant, targetId: webhookId, eventId, eventType: TEST_WEBHOOK_TYPE, payload }], now, { attemptNow: true });
      engine.wake();
      return asLogEntry((await engine.queue.get(tenant, webhookId, deliveryId!))!);
    },

    start: () => engine.start(),
    stop: () => engine.stop(),
  };
}

export type WebhooksModule = ReturnType<typeof webhooksModule>;
