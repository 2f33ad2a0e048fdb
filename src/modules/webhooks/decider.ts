import type { Decider } from '../../platform/commands/decider.ts';
import { notFound } from '../../platform/errors.ts';
import { webhookError } from './errors.ts';
import type { SealedSecret, WebhookEvent, WebhookSettings } from './events.ts';

export type WebhookState =
  | { status: 'absent' }
  | ({ status: 'present'; webhookId: string; secret: SealedSecret } & WebhookSettings)
  | { status: 'deleted'; webhookId: string };

export type WebhookCommand =
  | { type: 'CreateWebhook'; webhookId: string; settings: WebhookSettings; secret: SealedSecret }
  | { type: 'UpdateWebhook'; changes: Partial<WebhookSettings> }
  | { type: 'DeleteWebhook' }
  /** `secret` is the new one; the current one keeps signing until `previousSecretExpiresAt`. */
  | { type: 'RotateWebhookSecret'; secret: SealedSecret; previousSecretExpiresAt: string }
  | { type: 'DeactivateWebhook'; consecutiveFailures: number };

const sameValue = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

export const webhookDecider: Decider<WebhookState, WebhookCommand, WebhookEvent> = {
  initialState: () => ({ status: 'absent' }),

  evolve(state, event) {
    switch (event.type) {
      case 'WebhookCreated': {
        const { webhookId, sealedSecret, secretLastFour, ...settings } = event.data;
        return { status: 'present', webhookId, secret: { sealedSecret, secretLastFour }, ...settings };
      }
      case 'WebhookUpdated': {
        if (state.status !== 'present') return state;
        const { webhookId: _webhookId, ...changes } = event.data;
        return { ...state, ...changes };
      }
      case 'WebhookSecretRotated':
        if (state.status !== 'present') return state;
        return { ...state, secret: { sealedSecret: event.data.sealedSecret, secretLastFour: event.data.secretLastFour } };
      case 'WebhookDeactivated':
        return state.status === 'present' ? { ...state, isActive: false } : state;
      case 'WebhookDeleted':
        return { status: 'deleted', webhookId: event.data.webhookId };
      default: {
        const exhaustive: never = event;
        return exhaustive;
      }
    }
  },

  decide(command, state) {
    if (command.type === 'CreateWebhook') {
      if (state.status !== 'absent') throw webhookError('WEBHOOK_EXISTS', 'Webhook already exists');
      return [{ type: 'WebhookCreated', data: { webhookId: command.webhookId, ...command.settings, ...command.secret } }];
    }
    if (state.status !== 'present') throw notFound('Webhook');
    switch (command.type) {
      case 'UpdateWebhook': {
        const changed = Object.fromEntries(
          Object.entries(command.changes).filter(([key, value]) => value !== undefined && !sameValue(value, state[key as keyof WebhookSettings])),
        ) as Partial<WebhookSettings>;
        if (Object.keys(changed).length === 0) return [];
        return [{ type: 'WebhookUpdated', data: { webhookId: state.webhookId, ...changed } }];
      }
      case 'DeleteWebhook':
        return [{ type: 'WebhookDeleted', data: { webhookId: state.webhookId } }];
      case 'RotateWebhookSecret':
        return [
          {
            type: 'WebhookSecretRotated',
            data: {
              webhookId: state.webhookId,
              ...command.secret,
              previousSealedSecret: state.secret.sealedSecret,
              previousSecretExpiresAt: command.previousSecretExpiresAt,
            },
          },
        ];
      case 'DeactivateWebhook':
        // Deliveries already in flight keep failing after the first deactivation: once is enough.
        if (!state.isActive) return [];
        return [{ type: 'WebhookDeactivated', data: { webhookId: state.webhookId, consecutiveFailures: command.consecutiveFailures } }];
      default: {
        const exhaustive: never = command;
        return exhaustive;
      }
    }
  },
};
