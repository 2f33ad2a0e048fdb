import type { DomainEvent } from '../../platform/commands/decider.ts';

export interface WebhookSettings {
  name: string;
  url: string;
  /** Webhook types (user.created ...) or `*` for all. */
  events: string[];
  isActive: boolean;
}

/**
 * A signing secret as events carry it: sealed by the master key (SecretBox), never in clear text,
 * plus its last four characters for the masked reads. Both names are stripped from the bus.
 */
export interface SealedSecret {
  sealedSecret: string;
  secretLastFour: string;
}

export type WebhookCreated = DomainEvent<'WebhookCreated', WebhookSettings & SealedSecret & { webhookId: string }>;
export type WebhookUpdated = DomainEvent<'WebhookUpdated', Partial<WebhookSettings> & { webhookId: string }>;
export type WebhookDeleted = DomainEvent<'WebhookDeleted', { webhookId: string }>;
/** The previous secret keeps signing, second, until previousSecretExpiresAt (24 hours). */
export type WebhookSecretRotated = DomainEvent<
  'WebhookSecretRotated',
  SealedSecret & { webhookId: string; previousSealedSecret: string; previousSecretExpiresAt: string }
>;
/** Deliveries kept failing: the subscription stops receiving events until reactivated. */
export type WebhookDeactivated = DomainEvent<'WebhookDeactivated', { webhookId: string; consecutiveFailures: number }>;

export type WebhookEvent = WebhookCreated | WebhookUpdated | WebhookDeleted | WebhookSecretRotated | WebhookDeactivated;

export const webhookStreamId = (tenant: string, webhookId: string): string => `webhook-${tenant}.${webhookId}`;
