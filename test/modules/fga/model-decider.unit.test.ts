import { describe, it } from 'vitest';
import { modelDecider } from '../../../src/modules/fga/models/decider.ts';
import type { FgaModelEvent, ModelContent } from '../../../src/modules/fga/models/events.ts';
import { compileModel } from '../../../src/modules/fga/model.ts';
import { deciderSpec } from '../../support/decider-spec.ts';

const spec = deciderSpec(modelDecider);
const content = (dsl: string): ModelContent => ({ dsl, schema: compileModel(dsl).schema });
const v1 = content('type user');
const v2 = content('type user\ntype group\n  relations\n    define member: [user]');
const created = (modelId: string, version: number, name = `model ${version}`): FgaModelEvent => ({
  type: 'FgaModelCreated',
  data: { modelId, name, version, ...v1 },
});
const activated = (modelId: string, previousModelId: string | null = null): FgaModelEvent => ({
  type: 'FgaModelActivated',
  data: { modelId, previousModelId },
});

describe('authorization model decider (one stream per tenant)', () => {
  it('creates inactive models with the next version of the tenant', () => {
    spec.given([]).when({ type: 'CreateModel', modelId: 'm1', name: 'first', content: v1 }).then([
      { type: 'FgaModelCreated', data: { modelId: 'm1', name: 'first', version: 1, ...v1 } },
    ]);
    spec.given([created('m1', 1), created('m2', 2)]).when({ type: 'CreateModel', modelId: 'm3', name: 'third', content: v2 }).then([
      { type: 'FgaModelCreated', data: { modelId: 'm3', name: 'third', version: 3, ...v2 } },
    ]);
    spec.given([created('m1', 1)]).when({ type: 'CreateModel', modelId: 'm1', name: 'again', content: v1 }).thenThrows('MODEL_EXISTS');
  });

  it('never gives a deleted model\'s version out again', () => {
    spec.given([created('m1', 1), created('m2', 2), { type: 'FgaModelDeleted', data: { modelId: 'm2' } }])
      .when({ type: 'CreateModel', modelId: 'm3', name: 'next', content: v1 })
      .then([{ type: 'FgaModelCreated', data: { modelId: 'm3', name: 'next', version: 3, ...v1 } }]);
  });

  it('updates only what changes and keeps the version', () => {
    spec.given([created('m1', 1, 'old')]).when({ type: 'UpdateModel', modelId: 'm1', name: 'new', content: v2 }).then([
      { type: 'FgaModelUpdated', data: { modelId: 'm1', name: 'new', ...v2 } },
    ]);
    spec.given([created('m1', 1, 'same')]).when({ type: 'UpdateModel', modelId: 'm1', name: 'same', content: v1 }).then([]);
    spec.given([created('m1', 1, 'same')]).when({ type: 'UpdateModel', modelId: 'm1', content: v2 }).then([
      { type: 'FgaModelUpdated', data: { modelId: 'm1', ...v2 } },
    ]);
    spec.given([]).when({ type: 'UpdateModel', modelId: 'm1', name: 'x' }).thenThrows('NOT_FOUND');
  });

  it('activates one model at a time, naming the one it replaces', () => {
    spec.given([created('m1', 1)]).when({ type: 'ActivateModel', modelId: 'm1' }).then([activated('m1')]);
    spec.given([created('m1', 1), created('m2', 2), activated('m1')]).when({ type: 'ActivateModel', modelId: 'm2' }).then([activated('m2', 'm1')]);
    spec.given([created('m1', 1), activated('m1')]).when({ type: 'ActivateModel', modelId: 'm1' }).thenThrows('ALREADY_ACTIVE');
    spec.given([created('m1', 1), created('m2', 2), activated('m1'), activated('m2', 'm1')])
      .when({ type: 'ActivateModel', modelId: 'm1' })
      .then([activated('m1', 'm2')]);
    spec.given([]).when({ type: 'ActivateModel', modelId: 'm1' }).thenThrows('NOT_FOUND');
  });

  it('deletes inactive models only', () => {
    spec.given([created('m1', 1)]).when({ type: 'DeleteModel', modelId: 'm1' }).then([{ type: 'FgaModelDeleted', data: { modelId: 'm1' } }]);
    spec.given([created('m1', 1), activated('m1')]).when({ type: 'DeleteModel', modelId: 'm1' }).thenThrows('MODEL_IS_ACTIVE');
    spec.given([created('m1', 1), created('m2', 2), activated('m1'), activated('m2', 'm1')])
      .when({ type: 'DeleteModel', modelId: 'm1' })
      .then([{ type: 'FgaModelDeleted', data: { modelId: 'm1' } }]);
    spec.given([created('m1', 1), { type: 'FgaModelDeleted', data: { modelId: 'm1' } }]).when({ type: 'DeleteModel', modelId: 'm1' }).thenThrows('NOT_FOUND');
  });
});
