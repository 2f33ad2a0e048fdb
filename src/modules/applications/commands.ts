import type { CommandContext } from '../../platform/commands/context.ts';
import { fold } from '../../platform/commands/decider.ts';
import { handleCommand, type CommandDeps } from '../../platform/commands/handle-command.ts';
import type { EventStore } from '../../platform/eventstore/port.ts';
import { newId } from '../../platform/ids.ts';
import { clientIdOf, parseClientId } from './client-ids.ts';
import { newClientSecret } from './client-secrets.ts';
import { applicationDecider, type Application, type ApplicationCommand } from './decider.ts';
import { applicationStreamId, type ApplicationEvent, type ApplicationSettings, type ApplicationType } from './events.ts';
import { isPublicType } from './rules.ts';

/**
 * Applications' commands. Secrets are generated here, answered once, and enter events only hashed.
 * `forget` is told of every change once appended (this instance's client cache drops the entry).
 */
export function applicationCommands(deps: CommandDeps & { forget: (tenant: string, applicationId: string) => void }) {
  const run = async (tenant: string, applicationId: string, command: ApplicationCommand, context: CommandContext) => {
    const result = await handleCommand(deps, applicationDecider, applicationStreamId(tenant, applicationId), command, context);
    deps.forget(tenant, applicationId);
    return result;
  };

  return {
    /** Answers the client secret (web, m2m) in clear text: the only time it is ever shown. */
    async create(tenant: string, type: ApplicationType, settings: ApplicationSettings, context: CommandContext) {
      const applicationId = newId();
      const clientId = clientIdOf(tenant, applicationId);
      const secret = isPublicType(type) ? null : newClientSecret();
      const result = await run(tenant, applicationId, { type: 'CreateApplication', applicationId, clientId, applicationType: type, settings, secretHash: secret?.hash ?? null }, context);
      return { applicationId, clientId, clientSecret: secret?.secret ?? null, state: result.state };
    },

    update: (tenant: string, applicationId: string, changes: Partial<ApplicationSettings>, context: CommandContext) =>
      run(tenant, applicationId, { type: 'UpdateApplication', changes }, context),

    delete: (tenant: string, applicationId: string, context: CommandContext) => run(tenant, applicationId, { type: 'DeleteApplication' }, context),

    async rotateSecret(tenant: string, applicationId: string, context: CommandContext) {
      const { secret, hash } = newClientSecret();
      await run(tenant, applicationId, { type: 'RotateApplicationSecret', secretHash: hash }, context);
      return { clientSecret: secret };
    },
  };
}

export type ApplicationCommands = ReturnType<typeof applicationCommands>;

/**
 * The application a client_id names in `tenant`, from its stream (the write side: a client created
 * a moment ago is found, a deleted one is not); null when there is none.
 */
export async function applicationByClientId(store: EventStore, tenant: string, clientId: string): Promise<Application | null> {
  const parsed = parseClientId(clientId);
  if (!parsed || parsed.tenant !== tenant) return null;
  const state = fold(applicationDecider, (await store.readStream(applicationStreamId(tenant, parsed.applicationId))) as unknown as ApplicationEvent[]);
  return state.status === 'present' ? state : null;
}
