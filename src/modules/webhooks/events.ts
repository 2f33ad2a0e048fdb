import { z } from 'zod';
import { defineEvent, type EventOf } from '../../platform/events/define-event.ts';

const settingsFields = {
  name: z.string(),
  url: z.string(),
  /** Webhook types (user.created ...) or `*` for all. */
  events: z.array(z.string()),
  isActive: z.boolean(),
};

/**
 * A signing secret as events carry it: sealed by the master key (SecretBox), never in clear text,
 * plus its last four characters for the masked reads. Both stay off the bus.
 */
const sealedSecretFields = { sealedSecret: z.string(), secretLastFour: z.string() };
const SEALED_SECRET_PATHS = ['sealedSecret', 'secretLastFour'] as const;

export const webhookCreated = defineEvent({
  type: 'WebhookCreated',
  description: 'A webhook subscription; its signing secret travels only sealed by the master key.',
  data: z.strictObject({ webhookId: z.string(), ...settingsFields, ...sealedSecretFields }),
  sensitive: SEALED_SECRET_PATHS,
});
export const webhookUpdated = defineEvent({
  type: 'WebhookUpdated',
  description: 'The changed settings of a subscription (isActive true reactivates it).',
  data: z.strictObject({ webhookId: z.string(), ...settingsFields }).partial().required({ webhookId: true }),
});
export const webhookDeleted = defineEvent({ type: 'WebhookDeleted', data: z.strictObject({ webhookId: z.string() }) });
export const webhookSecretRotated = defineEvent({
  type: 'WebhookSecretRotated',
  description: 'A new signing secret; the previous one also signs until previousSecretExpiresAt (24 hours).',
  data: z.strictObject({ webhookId: z.string(), ...sealedSecretFields, previousSealedSecret: z.string(), previousSecretExpiresAt: z.string() }),
  sensitive: [...SEALED_SECRET_PATHS, 'previousSealedSecret'],
});
export const webhookDeactivated = defineEvent({
  type: 'WebhookDeactivated',
  description: 'Deliveries kept failing: the subscription receives no events until reactivated.',
  data: z.strictObject({ webhookId: z.string(), consecutiveFailures: z.number().int() }),
});

export const webhookEvents = [webhookCreated, webhookUpdated, webhookDeleted, webhookSecretRotated, webhookDeactivated];

export type WebhookCreated = EventOf<typeof webhookCreated>;
export type WebhookUpdated = EventOf<typeof webhookUpdated>;
export type WebhookDeleted = EventOf<typeof webhookDeleted>;
export type WebhookSecretRotated = EventOf<typeof webhookSecretRotated>;
export type WebhookDeactivated = EventOf<typeof webhookDeactivated>;
export type WebhookEvent = EventOf<(typeof webhookEvents)[number]>;

export type WebhookSettings = Omit<WebhookCreated['data'], 'webhookId' | 'sealedSecret' | 'secretLastFour'>;
export type SealedSecret = Pick<WebhookCreated['data'], 'sealedSecret' | 'secretLastFour'>;

export const webhookStreamId = (tenant: string, webhookId: string): string => `webhook-${tenant}.${webhookId}`;
