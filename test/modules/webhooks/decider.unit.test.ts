import { describe, it } from 'vitest';
import { webhookDecider } from '../../../src/modules/webhooks/decider.ts';
import type { WebhookEvent } from '../../../src/modules/webhooks/events.ts';
import { deciderSpec } from '../../support/decider-spec.ts';

const spec = deciderSpec(webhookDecider);
const settings = { name: 'crm', url: 'https://crm.example/hook', events: ['user.created'], isActive: true };
const secret = { sealedSecret: 'v1.sealed-one', secretLastFour: 'abcd' };
const created: WebhookEvent = { type: 'WebhookCreated', data: { webhookId: 'w1', ...settings, ...secret } };
const deactivated: WebhookEvent = { type: 'WebhookDeactivated', data: { webhookId: 'w1', consecutiveFailures: 10 } };
const deleted: WebhookEvent = { type: 'WebhookDeleted', data: { webhookId: 'w1' } };

describe('webhook decider', () => {
  it('creates a subscription once, its secret only sealed', () => {
    spec.given([]).when({ type: 'CreateWebhook', webhookId: 'w1', settings, secret }).then([created]);
    spec.given([created]).when({ type: 'CreateWebhook', webhookId: 'w1', settings, secret }).thenThrows('WEBHOOK_EXISTS');
  });

  it('records only the settings that change', () => {
    spec.given([created]).when({ type: 'UpdateWebhook', changes: { name: 'crm', events: ['user.created', 'user.deleted'] } }).then([
      { type: 'WebhookUpdated', data: { webhookId: 'w1', events: ['user.created', 'user.deleted'] } },
    ]);
    spec.given([created]).when({ type: 'UpdateWebhook', changes: { url: settings.url, isActive: true } }).then([]);
    spec.given([]).when({ type: 'UpdateWebhook', changes: { name: 'x' } }).thenThrows('NOT_FOUND');
  });

  it('rotation keeps the current secret as the previous one until the grace ends', () => {
    const next = { sealedSecret: 'v1.sealed-two', secretLastFour: 'wxyz' };
    const rotated: WebhookEvent = {
      type: 'WebhookSecretRotated',
      data: { webhookId: 'w1', ...next, previousSealedSecret: 'v1.sealed-one', previousSecretExpiresAt: '2026-01-02T00:00:00.000Z' },
    };
    spec.given([created]).when({ type: 'RotateWebhookSecret', secret: next, previousSecretExpiresAt: '2026-01-02T00:00:00.000Z' }).then([rotated]);
    spec.given([created, rotated])
      .when({ type: 'RotateWebhookSecret', secret, previousSecretExpiresAt: '2026-01-03T00:00:00.000Z' })
      .then([
        {
          type: 'WebhookSecretRotated',
          data: { webhookId: 'w1', ...secret, previousSealedSecret: 'v1.sealed-two', previousSecretExpiresAt: '2026-01-03T00:00:00.000Z' },
        },
      ]);
  });

  it('deactivates an active subscription once; reactivation is an update', () => {
    spec.given([created]).when({ type: 'DeactivateWebhook', consecutiveFailures: 10 }).then([deactivated]);
    spec.given([created, deactivated]).when({ type: 'DeactivateWebhook', consecutiveFailures: 11 }).then([]);
    spec.given([created, deactivated]).when({ type: 'UpdateWebhook', changes: { isActive: true } }).then([
      { type: 'WebhookUpdated', data: { webhookId: 'w1', isActive: true } },
    ]);
  });

  it('deletes once; a deleted subscription takes no command', () => {
    spec.given([created]).when({ type: 'DeleteWebhook' }).then([deleted]);
    spec.given([created, deleted]).when({ type: 'DeleteWebhook' }).thenThrows('NOT_FOUND');
    spec.given([created, deleted]).when({ type: 'DeactivateWebhook', consecutiveFailures: 10 }).thenThrows('NOT_FOUND');
  });
});
