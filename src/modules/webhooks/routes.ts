import { z } from 'zod';
import { notFound } from '../../platform/errors.ts';
import { requirePermission } from '../../platform/http/authentication.ts';
import { commandContextOf, type ReadYourWrites } from '../../platform/http/request-context.ts';
import { idParams, pageQuery } from '../../platform/http/schemas.ts';
import type { HttpServer } from '../../platform/http/server.ts';
import { tenantOf } from '../../platform/http/tenant-resolution.ts';
import { registerVersioned } from '../../platform/http/versioned.ts';
import { WEBHOOK_TYPE_ALIASES, WEBHOOK_TYPES } from './event-types.ts';
import type { WebhooksModule } from './module.ts';

const KNOWN_TYPES = new Set<string>(['*', ...WEBHOOK_TYPES, ...Object.keys(WEBHOOK_TYPE_ALIASES)]);

const eventTypes = z
  .array(z.string().refine((type) => KNOWN_TYPES.has(type), 'unknown event type'))
  .min(1)
  .max(WEBHOOK_TYPES.length + 1)
  .transform((types) => [...new Set(types.map((type) => WEBHOOK_TYPE_ALIASES[type] ?? type))]);

const fields = {
  name: z.string().trim().min(1).max(100),
  url: z
    .url()
    .max(2048)
    .refine((url) => url.toLowerCase().startsWith('https://'), 'must be an https URL'),
  events: eventTypes,
  isActive: z.boolean(),
};
const createBody = z.strictObject({ ...fields, isActive: fields.isActive.default(true) });
const updateBody = z.strictObject(fields).partial();
const deliveryParams = idParams.extend({ deliveryId: z.string().min(1).max(100) });

export interface WebhookRouteDeps {
  webhooks: WebhooksModule;
  readYourWrites: ReadYourWrites;
}

/** /api/webhooks (manage:webhooks; decisions.md, Webhooks). */
export function registerWebhookRoutes(app: HttpServer, { webhooks, readYourWrites }: WebhookRouteDeps): void {
  const guard = { tags: ['Webhooks'], onRequest: [requirePermission('manage:webhooks')] };
  const webhookOr404 = async (tenant: string, id: string) => (await webhooks.queries.get(tenant, id)) ?? Promise.reject(notFound('Webhook'));

  registerVersioned(app, {
    ...guard,
    method: 'GET',
    path: '/webhooks',
    summary: 'List webhook subscriptions (secrets masked)',
    handler: async (request) => ({ kind: 'all', items: await webhooks.queries.list(tenantOf(request).name) }),
  });

  registerVersioned(app, {
    ...guard,
    method: 'POST',
    path: '/webhooks',
    summary: 'Create a webhook subscription; the answer holds the signing secret, shown only this once',
    body: createBody,
    handler: async (request) => {
      const tenant = tenantOf(request).name;
      const { webhookId, signingSecret, position } = await webhooks.commands.create(tenant, request.body, commandContextOf(request));
      await readYourWrites(position, ['webhooks']);
      return { kind: 'item', status: 201, data: { ...(await webhookOr404(tenant, webhookId)), signingSecret } };
    },
  });

  registerVersioned(app, {
    ...guard,
    method: 'GET',
    path: '/webhooks/:id',
    summary: 'Read a webhook subscription (secret masked)',
    params: idParams,
    handler: async (request) => ({ kind: 'item', data: await webhookOr404(tenantOf(request).name, request.params.id) }),
  });

  registerVersioned(app, {
    ...guard,
    method: 'PUT',
    path: '/webhooks/:id',
    summary: 'Update a webhook subscription (isActive true reactivates a deactivated one)',
    params: idParams,
    body: updateBody,
    handler: async (request) => {
      const tenant = tenantOf(request).name;
      const { position } = await webhooks.commands.update(tenant, request.params.id, request.body, commandContextOf(request));
      await readYourWrites(position, ['webhooks']);
      return { kind: 'item', data: await webhookOr404(tenant, request.params.id) };
    },
  });

  registerVersioned(app, {
    ...guard,
    method: 'DELETE',
    path: '/webhooks/:id',
    summary: 'Delete a webhook subscription; its pending deliveries are dropped',
    params: idParams,
    handler: async (request) => {
      const tenant = tenantOf(request).name;
      await webhookOr404(tenant, request.params.id);
      const { position } = await webhooks.commands.delete(tenant, request.params.id, commandContextOf(request));
      await readYourWrites(position, ['webhooks']);
      return { kind: 'deleted', legacy: { deleted: true } };
    },
  });

  registerVersioned(app, {
    ...guard,
    method: 'POST',
    path: '/webhooks/:id/rotate-secret',
    summary: 'Rotate the signing secret; the previous one also signs for 24 hours',
    params: idParams,
    handler: async (request) => {
      const tenant = tenantOf(request).name;
      await webhookOr404(tenant, request.params.id);
      const { signingSecret, previousSecretExpiresAt, position } = await webhooks.commands.rotateSecret(tenant, request.params.id, commandContextOf(request));
      await readYourWrites(position, ['webhooks']);
      return { kind: 'item', data: { id: request.params.id, signingSecret, previousSecretExpiresAt } };
    },
  });

  registerVersioned(app, {
    ...guard,
    method: 'GET',
    path: '/webhooks/:id/deliveries',
    summary: 'The delivery log, newest first',
    params: idParams,
    query: z.object(pageQuery()),
    handler: async (request) => {
      const { page, limit } = request.query;
      const { items, total } = await webhooks.deliveries(tenantOf(request).name, request.params.id, page, limit);
      return { kind: 'page', items, page, limit, total };
    },
  });

  registerVersioned(app, {
    ...guard,
    method: 'POST',
    path: '/webhooks/:id/deliveries/:deliveryId/retry',
    summary: 'Attempt a failed delivery again now',
    params: deliveryParams,
    handler: async (request) => ({
      kind: 'item',
      data: await webhooks.retry(tenantOf(request).name, request.params.id, request.params.deliveryId),
    }),
  });

  registerVersioned(app, {
    ...guard,
    method: 'POST',
    path: '/webhooks/:id/test',
    summary: 'Send a webhook.test event to the subscription',
    params: idParams,
    handler: async (request) => ({ kind: 'item', data: await webhooks.sendTest(tenantOf(request).name, request.params.id) }),
  });
}
