import type { CommandContext } from '../../platform/commands/context.ts';
import { handleCommand, type CommandDeps } from '../../platform/commands/handle-command.ts';
import { settingsDecider } from './decider.ts';
import { settingsStreamId } from './events.ts';
import type { SectionName } from './sections.ts';

export function settingsCommands(deps: CommandDeps) {
  return {
    update: (tenant: string, section: SectionName, data: Record<string, unknown>, context: CommandContext) =>
      handleCommand(deps, settingsDecider, settingsStreamId(tenant), { type: 'UpdateSection', section, data }, context),
  };
}
