import type { CommandContext } from '../../platform/commands/context.ts';
import { decideAppend, handleCommand, type CommandDeps } from '../../platform/commands/handle-command.ts';
import { hashOpaqueSecret, newOpaqueToken, parseOpaqueToken } from '../../platform/crypto/opaque-tokens.ts';
import { WrongExpectedVersionError } from '../../platform/eventstore/errors.ts';
import type { StreamAppend } from '../../platform/eventstore/port.ts';
import { newId } from '../../platform/ids.ts';
import { emailLinkDecider, invalidLink, type LinkAccount } from './decider.ts';
import { EMAIL_LINK_LIFETIME_SECONDS, emailLinkStreamId, type EmailLinkIssued, type EmailLinkPurpose } from './events.ts';

export function emailLinkCommands(deps: CommandDeps) {
  return {
    /**
     * A new single-use link for a user; the clear token is returned once, to be e-mailed. `user` is
     * the state whose address the link is mailed to: its password and e-mail versions are recorded.
     */
    async issue(tenant: string, user: LinkAccount & { userId: string }, purpose: EmailLinkPurpose, context: CommandContext) {
      const linkId = newId();
      const { token, hash } = newOpaqueToken(linkId);
      const expiresAt = new Date(deps.clock.now().getTime() + EMAIL_LINK_LIFETIME_SECONDS[purpose] * 1000).toISOString();
      const { passwordVersion, emailVersion } = user;
      const link = { linkId, userId: user.userId, purpose, secretHash: hash, expiresAt, passwordVersion, emailVersion };
      await handleCommand(deps, emailLinkDecider, emailLinkStreamId(tenant, linkId), { type: 'IssueEmailLink', link }, context);
      return { token, expiresAt };
    },

    /**
     * Checks a presented link and returns the append that marks it used, for the caller to commit
     * atomically with what the link authorises. The expected revision makes a second use fail.
     */
    async use(tenant: string, token: string, purpose: EmailLinkPurpose, context: CommandContext): Promise<{ link: EmailLinkIssued['data']; append: StreamAppend }> {
      const parsed = parseOpaqueToken(token);
      if (!parsed) throw invalidLink();
      const command = { type: 'UseEmailLink' as const, presentedHash: hashOpaqueSecret(parsed.secret), purpose, now: deps.clock.now().toISOString() };
      const { state, append } = await decideAppend(deps, emailLinkDecider, emailLinkStreamId(tenant, parsed.id), command, context);
      // The decider throws for anything but an issued link; this narrows the types.
      if (state.status !== 'issued' || !append) throw invalidLink();
      return { link: state.link, append };
    },
  };
}

/** A link used concurrently by another request loses the race: answer as for a used link. */
export function mapLinkRace(error: unknown): never {
  if (error instanceof WrongExpectedVersionError && error.streamId.startsWith('emaillink-')) throw invalidLink();
  throw error;
}

export type EmailLinkCommands = ReturnType<typeof emailLinkCommands>;
