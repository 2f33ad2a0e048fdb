import { z } from 'zod';
import { WEBHOOK_EVENT_TYPES } from '../audit/index.ts';
import { notFound } from '../../platform/errors.ts';
import { commandContextOf } from '../../platform/http/request-context.ts';
import { permission } from '../../platform/http/route.ts';
import { idParams, pageQuery } from '../../platform/http/schemas.ts';
import type { HttpServer } from '../../platform/http/server.ts';
import { tenantOf } from '../../platform/http/tenant-resolution.ts';
import { registerVersioned } from '../../platform/http/versioned.ts';
import type { WebhooksModule } from './module.ts';

/** Names a subscription may use for another type (the audit reference's spelling). */
const WEBHOOK_TYPE_ALIASES: Record<string, string> = { 'role.removed': 'role.unassigned' };
const KNOWN_TYPES = new Set<string>(['*', ...WEBHOOK_EVENT_TYPES, ...Object.keys(WEBHOOK_TYPE_ALIASES)]);

const eventTypes = z
  .array(z.string().refine((type) => KNOWN_TYPES.has(type), 'unknown event type'))
  .min(1)
  .max(WEBHOOK_EVENT_TYPES.length + 1)
  .describe(
    `event types (docs/webhooks.md): ${WEBHOOK_EVENT_TYPES.join(', ')}; "*" for every type; role.removed is read as role.unassigned. ` +
      'user.email_verified, login.suspicious and the organization types are accepted but nothing sends them yet',
  )
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

/** A subscription as reads show it; the create answer has the same shape with the secret in clear. */
const webhookSchema = z.object({
  id: z.string(),
  name: z.string(),
  url: z.string(),
  events: z.array(z.string()),
  signingSecret: z.string().describe('masked as whsec_...abcd (its last four characters), except in the create answer'),
  isActive: z.boolean().describe('false once 10 consecutive deliveries failed (each after its last retry; a delivered one resets the count), or when set so'),
  createdAt: z.string(),
  updatedAt: z.string(),
});
const rotatedSchema = z.object({
  id: z.string(),
  signingSecret: z.string().describe('the new secret, shown only this once'),
  previousSecretExpiresAt: z.string().describe('until then the previous secret signs too'),
});
/** An entry of the delivery log (a delivery dropped with its subscription shows as failed). */
const deliverySchema = z.object({
  id: z.string(),
  eventId: z.string(),
  eventType: z.string(),
  attempt: z.number().int().describe('attempts made; 0 while it waits held by the subscription\'s open circuit'),
  status: z
    .enum(['pending', 'retrying', 'delivered', 'failed'])
    .describe('pending: not attempted yet (with nextAttemptAt null, held while the subscription fails: one held delivery is sent as a probe every few seconds, and all go once one gets through)'),
  responseStatus: z.number().int().nullable(),
  responseBody: z.string().nullable().describe('the first 1 KB of the last answer'),
  durationMs: z.number().nullable(),
  error: z.string().nullable(),
  createdAt: z.string(),
  nextAttemptAt: z.string().nullable().describe('null once settled, and while held by the subscription\'s open circuit'),
});

/** /api/webhooks (manage:webhooks; decisions.md, Webhooks). */
export function registerWebhookRoutes(app: HttpServer, webhooks: WebhooksModule): void {
  const guard = { tags: ['Webhooks'], access: permission('manage:webhooks') };
  const webhookOr404 = async (tenant: string, id: string) => (await webhooks.queries.get(tenant, id)) ?? Promise.reject(notFound('Webhook'));

  registerVersioned(app, {
    ...guard,
    method: 'GET',
    path: '/webhooks',
    summary: 'List webhook subscriptions (secrets masked)',
    answers: { kind: 'all', item: webhookSchema },
    handler: async (request) => ({ kind: 'all', items: await webhooks.queries.list(tenantOf(request).name) }),
  });

  registerVersioned(app, {
    ...guard,
    method: 'POST',
    path: '/webhooks',
    summary: 'Create a webhook subscription; the answer holds the signing secret, shown only this once',
    answers: { kind: 'item', item: webhookSchema, status: 201 },
    errors: ['WEBHOOK_EXISTS'],
    body: createBody,
    handler: async (request) => {
      const tenant = tenantOf(request).name;
      const { webhookId, signingSecret } = await webhooks.commands.create(tenant, request.body, commandContextOf(request));
      return { kind: 'item', status: 201, data: { ...(await webhookOr404(tenant, webhookId)), signingSecret } };
    },
  });

  registerVersioned(app, {
    ...guard,
    method: 'GET',
    path: '/webhooks/:id',
    summary: 'Read a webhook subscription (secret masked)',
    answers: { kind: 'item', item: webhookSchema },
    errors: ['NOT_FOUND'],
    params: idParams,
    handler: async (request) => ({ kind: 'item', data: await webhookOr404(tenantOf(request).name, request.params.id) }),
  });

  registerVersioned(app, {
    ...guard,
    method: 'PUT',
    path: '/webhooks/:id',
    summary: 'Update a webhook subscription (isActive true reactivates a deactivated one)',
    answers: { kind: 'item', item: webhookSchema },
    errors: ['NOT_FOUND'],
    params: idParams,
    body: updateBody,
    handler: async (request) => {
      const tenant = tenantOf(request).name;
      await webhooks.commands.update(tenant, request.params.id, request.body, commandContextOf(request));
      return { kind: 'item', data: await webhookOr404(tenant, request.params.id) };
    },
  });

  registerVersioned(app, {
    ...guard,
    method: 'DELETE',
    path: '/webhooks/:id',
    summary: 'Delete a webhook subscription; its pending deliveries are dropped',
    answers: { kind: 'deleted' },
    errors: ['NOT_FOUND'],
    params: idParams,
    handler: async (request) => {
      const tenant = tenantOf(request).name;
      await webhookOr404(tenant, request.params.id);
      await webhooks.commands.delete(tenant, request.params.id, commandContextOf(request));
      return { kind: 'deleted' };
    },
  });

  registerVersioned(app, {
    ...guard,
    method: 'POST',
    path: '/webhooks/:id/rotate-secret',
    summary: 'Rotate the signing secret; the previous one also signs for 24 hours',
    answers: { kind: 'item', item: rotatedSchema },
    errors: ['NOT_FOUND'],
    params: idParams,
    handler: async (request) => {
      const tenant = tenantOf(request).name;
      await webhookOr404(tenant, request.params.id);
      const { signingSecret, previousSecretExpiresAt } = await webhooks.commands.rotateSecret(tenant, request.params.id, commandContextOf(request));
      return { kind: 'item', data: { id: request.params.id, signingSecret, previousSecretExpiresAt } };
    },
  });

  registerVersioned(app, {
    ...guard,
    method: 'GET',
    path: '/webhooks/:id/deliveries',
    summary: 'The delivery log, newest first',
    answers: { kind: 'page', item: deliverySchema },
    errors: ['NOT_FOUND'],
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
    answers: { kind: 'item', item: deliverySchema },
    errors: ['NOT_FOUND', 'DELIVERY_NOT_FAILED'],
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
    answers: { kind: 'item', item: deliverySchema },
    errors: ['NOT_FOUND'],
    params: idParams,
    handler: async (request) => ({ kind: 'item', data: await webhooks.sendTest(tenantOf(request).name, request.params.id) }),
  });
}
