import { invalidLink, linkStillCurrent, mapLinkRace, type EmailLinkCommands } from '../email-links/index.ts';
import type { SessionCommands } from '../sessions/index.ts';
import { loadUser, type UserCommands } from '../users/index.ts';
import type { CommandContext } from '../../platform/commands/context.ts';
import type { EventStore } from '../../platform/eventstore/port.ts';
import type { linkDelivery } from './link-delivery.ts';
import type { LockoutCommands } from './lockout.ts';

export interface PasswordFlowDeps {
  store: EventStore;
  users: UserCommands;
  links: EmailLinkCommands;
  sessions: SessionCommands;
  lockout: LockoutCommands;
  requestLink: ReturnType<typeof linkDelivery>;
}

/** Change (with the current password), forgot and reset: every change ends the user's other sessions. */
export function passwordFlows(deps: PasswordFlowDeps) {
  return {
    change(tenant: string, user: { userId: string; sessionId: string | null }, currentPassword: string, newPassword: string, context: CommandContext) {
      const keptSessionId = user.sessionId ?? undefined;
      return deps.users.changePassword(tenant, user.userId, { newPassword, currentPassword, reason: 'change', keptSessionId }, context, () =>
        deps.sessions.revokeAllOfUser(tenant, user.userId, 'password_change', context, keptSessionId),
      );
    },

    requestReset(tenant: string, email: string, context: CommandContext): void {
      deps.requestLink('password_reset', tenant, email, context);
    },

    /**
     * Sets the password from a reset link: the link is marked used, every session revoked and a
     * lockout lifted in the same append. A link issued before any later password change or e-mail
     * change is void, and so is any link while the account is disabled (it gets none; one mailed
     * before sets nothing).
     */
    async completeReset(tenant: string, token: string, newPassword: string, context: CommandContext) {
      const { link, append } = await deps.links.use(tenant, token, 'password_reset', context);
      const user = await loadUser(deps.store, tenant, link.userId);
      if (user.status !== 'active' || !user.enabled || !linkStillCurrent(link, user)) throw invalidLink();
      const asUser = { ...context, actor: link.userId };
      return deps.users
        .changePassword(tenant, link.userId, { newPassword, reason: 'reset' }, asUser, async () => [
          append,
          ...(await deps.sessions.revokeAllOfUser(tenant, link.userId, 'password_reset', asUser)),
          ...(await deps.lockout.unlockAppends(tenant, link.userId, asUser)),
        ])
        .catch(mapLinkRace);
    },
  };
}

export type PasswordFlows = ReturnType<typeof passwordFlows>;
