import { invalidLink, linkStillCurrent, mapLinkRace, type EmailLinkCommands } from '../email-links/index.ts';
import { loadUser } from '../users/index.ts';
import type { CommandContext } from '../../platform/commands/context.ts';
import type { EventStore } from '../../platform/eventstore/port.ts';
import type { linkDelivery } from './link-delivery.ts';
import type { AuthenticateUser } from './login.ts';

/** Passwordless login by e-mail: request a link, then exchange it once for a session. */
export function magicLinks(deps: { store: EventStore; links: EmailLinkCommands; authenticate: AuthenticateUser; requestLink: ReturnType<typeof linkDelivery> }) {
  return {
    request(tenant: string, email: string, context: CommandContext): void {
      deps.requestLink('magic_link', tenant, email, context);
    },

    /**
     * The link is spent in the same append that starts the session; a locked or disabled account keeps it unspent.
     * A link mailed to an address the account no longer has is void (invalid).
     */
    async consume(tenant: string, token: string, context: CommandContext) {
      const { link, append } = await deps.links.use(tenant, token, 'magic_link', context);
      const user = await loadUser(deps.store, tenant, link.userId);
      if (user.status !== 'active' || !linkStillCurrent(link, user)) throw invalidLink();
      return deps.authenticate(tenant, user, { method: 'magic_link', passwordMatches: true, amr: ['email'] }, context, [append]).catch(mapLinkRace);
    },
  };
}
