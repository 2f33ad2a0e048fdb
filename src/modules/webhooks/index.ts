// The public surface of the webhooks module: other modules, the composition root and the read models import only this.
export { errorStatuses } from './errors.ts';
export { webhookEvents } from './events.ts';
export type { WebhookCreated, WebhookDeactivated, WebhookDeleted, WebhookEvent, WebhookSecretRotated, WebhookUpdated } from './events.ts';
export { webhooksModule } from './module.ts';
export type { WebhooksModule } from './module.ts';
export { webhookQueries } from './queries.ts';
export { registerWebhookRoutes } from './routes.ts';
