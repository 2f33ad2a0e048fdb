import type { EmailLinkCommands, EmailLinkPurpose } from '../email-links/index.ts';
import type { SettingsProvider } from '../settings/index.ts';
import type { CommandContext } from '../../platform/commands/context.ts';
import type { BackgroundTasks } from '../../platform/background-tasks.ts';
import type { ReservationNames } from '../../platform/commands/reservation-names.ts';
import type { EventStore } from '../../platform/eventstore/port.ts';
import type { Mailer } from '../../platform/mail/port.ts';
import { linkEmail } from './emails.ts';
import { accountByEmail } from './login.ts';

export interface LinkDeliveryDeps {
  store: EventStore;
  reservationNames: ReservationNames;
  links: EmailLinkCommands;
  mailer: Mailer;
  settings: SettingsProvider;
  background: BackgroundTasks;
  publicUrl: string;
}

/**
 * Forgot-password and magic-link requests: the answer never depends on whether the account
 * exists (same body, and the lookup, link and e-mail happen after the answer). Disabled
 * accounts get nothing either.
 */
export function linkDelivery(deps: LinkDeliveryDeps) {
  return function requestLink(purpose: EmailLinkPurpose, tenant: string, email: string, context: CommandContext): void {
    deps.background.run(`email link ${purpose}`, async () => {
      const user = (await accountByEmail(deps, tenant, email))?.user;
      if (!user?.enabled) return;
      const { token } = await deps.links.issue(tenant, user, purpose, { ...context, actor: user.userId });
      const { settings } = await deps.settings.nested(tenant);
      const tenantName = settings.general.displayName ?? tenant;
      await deps.mailer.send(linkEmail(purpose, { to: user.email, publicUrl: deps.publicUrl, tenant, token, tenantName }));
    });
  };
}
