import type { CommandContext } from '../../../platform/commands/context.ts';
import { handleCommand, type CommandDeps } from '../../../platform/commands/handle-command.ts';
import { newId } from '../../../platform/ids.ts';
import { translated } from '../app-errors.ts';
import { compileModel } from '../model.ts';
import { modelDecider, type ModelCommand } from './decider.ts';
import { modelsStreamId, type ModelContent } from './events.ts';

/** Parses and validates the DSL (DSL_PARSE_ERROR with its line, DSL_VALIDATION_ERROR). */
function compiled(dsl: string): ModelContent {
  return { dsl, schema: translated(() => compileModel(dsl)).schema };
}

export function modelCommands(deps: CommandDeps) {
  const run = (tenant: string, command: ModelCommand, context: CommandContext) =>
    handleCommand(deps, modelDecider, modelsStreamId(tenant), command, context);

  return {
    async create(tenant: string, input: { name: string; dsl: string }, context: CommandContext) {
      const modelId = newId();
      const { position, state, occurredAt } = await run(tenant, { type: 'CreateModel', modelId, name: input.name, content: compiled(input.dsl) }, context);
      return { modelId, position, model: state.models.get(modelId)!, createdAt: occurredAt! };
    },

    /** Re-parses and re-validates a new DSL; the version stays (spec, Versioning). */
    update(tenant: string, modelId: string, changes: { name?: string | undefined; dsl?: string | undefined }, context: CommandContext) {
      const content = changes.dsl === undefined ? undefined : compiled(changes.dsl);
      return run(tenant, { type: 'UpdateModel', modelId, name: changes.name, content }, context);
    },

    activate(tenant: string, modelId: string, context: CommandContext) {
      return run(tenant, { type: 'ActivateModel', modelId }, context);
    },

    delete(tenant: string, modelId: string, context: CommandContext) {
      return run(tenant, { type: 'DeleteModel', modelId }, context);
    },
  };
}

export type ModelCommands = ReturnType<typeof modelCommands>;
