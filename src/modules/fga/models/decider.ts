import type { Decider } from '../../../platform/commands/decider.ts';
import { notFound } from '../../../platform/errors.ts';
import { fgaError } from '../app-errors.ts';
import type { FgaModelEvent, ModelContent } from './events.ts';

export interface ModelState extends ModelContent {
  modelId: string;
  name: string;
  version: number;
  status: 'inactive' | 'active';
}

/** The models of one tenant. Deleted models leave; their versions are never given out again. */
export interface TenantModelsState {
  models: ReadonlyMap<string, ModelState>;
  lastVersion: number;
  activeModelId: string | null;
}

/** Content arrives compiled: the command handler parses and validates the DSL before deciding. */
export type ModelCommand =
  | { type: 'CreateModel'; modelId: string; name: string; content: ModelContent }
  | { type: 'UpdateModel'; modelId: string; name?: string | undefined; content?: ModelContent | undefined }
  | { type: 'ActivateModel'; modelId: string }
  | { type: 'DeleteModel'; modelId: string };

const withModel = (state: TenantModelsState, model: ModelState): TenantModelsState => ({
  ...state,
  models: new Map(state.models).set(model.modelId, model),
});

function existing(state: TenantModelsState, modelId: string): ModelState {
  const model = state.models.get(modelId);
  if (!model) throw notFound('Model');
  return model;
}

export const modelDecider: Decider<TenantModelsState, ModelCommand, FgaModelEvent> = {
  initialState: () => ({ models: new Map(), lastVersion: 0, activeModelId: null }),

  evolve(state, event) {
    switch (event.type) {
      case 'FgaModelCreated': {
        const { modelId, name, version, dsl, schema } = event.data;
        return { ...withModel(state, { modelId, name, version, dsl, schema, status: 'inactive' }), lastVersion: version };
      }
      case 'FgaModelUpdated': {
        const model = state.models.get(event.data.modelId);
        if (!model) return state;
        const { modelId: _modelId, ...changes } = event.data;
        return withModel(state, { ...model, ...changes });
      }
      case 'FgaModelActivated': {
        const { modelId, previousModelId } = event.data;
        const models = new Map(state.models);
        const previous = previousModelId ? models.get(previousModelId) : undefined;
        if (previous) models.set(previous.modelId, { ...previous, status: 'inactive' });
        const activated = models.get(modelId);
        if (activated) models.set(modelId, { ...activated, status: 'active' });
        return { ...state, models, activeModelId: modelId };
      }
      case 'FgaModelDeleted': {
        const models = new Map(state.models);
        models.delete(event.data.modelId);
        return { ...state, models };
      }
      default: {
        const exhaustive: never = event;
        return exhaustive;
      }
    }
  },

  decide(command, state) {
    switch (command.type) {
      case 'CreateModel': {
        if (state.models.has(command.modelId)) throw fgaError('MODEL_EXISTS', 'Model already exists');
        const { modelId, name, content } = command;
        return [{ type: 'FgaModelCreated', data: { modelId, name, version: state.lastVersion + 1, ...content } }];
      }
      case 'UpdateModel': {
        const model = existing(state, command.modelId);
        const name = command.name !== undefined && command.name !== model.name ? { name: command.name } : {};
        const content = command.content && command.content.dsl !== model.dsl ? command.content : {};
        if (Object.keys(name).length + Object.keys(content).length === 0) return [];
        return [{ type: 'FgaModelUpdated', data: { modelId: model.modelId, ...name, ...content } }];
      }
      case 'ActivateModel': {
        const model = existing(state, command.modelId);
        if (model.status === 'active') throw fgaError('ALREADY_ACTIVE', 'The model is already active');
        return [{ type: 'FgaModelActivated', data: { modelId: model.modelId, previousModelId: state.activeModelId } }];
      }
      case 'DeleteModel': {
        const model = existing(state, command.modelId);
        if (model.status === 'active') throw fgaError('MODEL_IS_ACTIVE', 'The active model cannot be deleted; activate another first');
        return [{ type: 'FgaModelDeleted', data: { modelId: model.modelId } }];
      }
      default: {
        const exhaustive: never = command;
        return exhaustive;
      }
    }
  },
};

/** The tenant's active model, if any. */
export function activeModel(state: TenantModelsState): ModelState | null {
  return state.activeModelId ? (state.models.get(state.activeModelId) ?? null) : null;
}
