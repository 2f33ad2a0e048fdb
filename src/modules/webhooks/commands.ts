import type { CommandContext } from '../../platform/commands/context.ts';
import { handleCommand, type CommandDeps } from '../../platform/commands/handle-command.ts';
import type { SecretBox } from '../../platform/crypto/secret-box.ts';
import { newId } from '../../platform/ids.ts';
import { webhookDecider, type WebhookCommand } from './decider.ts';
import { webhookStreamId, type SealedSecret, type WebhookSettings } from './events.ts';
import { lastFour, newSigningSecret } from './signing.ts';

/** During a rotation the previous secret keeps signing this long (decisions.md, Webhooks). */
export const ROTATION_GRACE_MS = 24 * 60 * 60 * 1000;

export interface WebhookCommandDeps extends CommandDeps {
  secretBox: SecretBox;
}

/** Webhook subscriptions' commands. Secrets are generated here and enter events only sealed. */
export function webhookCommands(deps: WebhookCommandDeps) {
  const run = (tenant: string, webhookId: string, command: WebhookCommand, context: CommandContext) =>
    handleCommand(deps, webhookDecider, webhookStreamId(tenant, webhookId), command, context);
  const freshSecret = (): { signingSecret: string; sealed: SealedSecret } => {
    const signingSecret = newSigningSecret();
    return { signingSecret, sealed: { sealedSecret: deps.secretBox.seal(signingSecret), secretLastFour: lastFour(signingSecret) } };
  };

  return {
    /** Answers the secret in clear text: the only time it is ever shown. */
    async create(tenant: string, settings: WebhookSettings, context: CommandContext) {
      const webhookId = newId();
      const { signingSecret, sealed } = freshSecret();
      const { position } = await run(tenant, webhookId, { type: 'CreateWebhook', webhookId, settings, secret: sealed }, context);
      return { webhookId, signingSecret, position };
    },

    update: (tenant: string, webhookId: string, changes: Partial<WebhookSettings>, context: CommandContext) =>
      run(tenant, webhookId, { type: 'UpdateWebhook', changes }, context),

    delete: (tenant: string, webhookId: string, context: CommandContext) => run(tenant, webhookId, { type: 'DeleteWebhook' }, context),

    async rotateSecret(tenant: string, webhookId: string, context: CommandContext) {
      const { signingSecret, sealed } = freshSecret();
      const previousSecretExpiresAt = new Date(deps.clock.now().getTime() + ROTATION_GRACE_MS).toISOString();
      const { position } = await run(tenant, webhookId, { type: 'RotateWebhookSecret', secret: sealed, previousSecretExpiresAt }, context);
      return { signingSecret, previousSecretExpiresAt, position };
    },

    /** Whether this call deactivated the subscription (false when it was inactive already). */
    async deactivate(tenant: string, webhookId: string, consecutiveFailures: number, context: CommandContext): Promise<boolean> {
      const { events } = await run(tenant, webhookId, { type: 'DeactivateWebhook', consecutiveFailures }, context);
      return events.length > 0;
    },
  };
}

export type WebhookCommands = ReturnType<typeof webhookCommands>;
