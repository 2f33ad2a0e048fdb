import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileModel } from '../../../src/modules/fga/model.ts';
import { modelDecider, type ModelCommand } from '../../../src/modules/fga/models/decider.ts';
import { modelsStreamId } from '../../../src/modules/fga/models/events.ts';
import { ActiveModels, MODEL_CACHE_TTL_MS } from '../../../src/modules/fga/serving/active-models.ts';
import { ManualClock } from '../../../src/platform/clock.ts';
import { handleCommand } from '../../../src/platform/commands/handle-command.ts';
import { PostgresEventStore } from '../../../src/platform/eventstore/postgres.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';

describe('the active-model cache', () => {
  let db: TestDatabase;
  let store: PostgresEventStore;
  const clock = new ManualClock();
  const run = (command: ModelCommand) => handleCommand({ store, clock }, modelDecider, modelsStreamId('t'), command, { tenantId: 't', actor: 'test' });
  const content = (dsl: string) => ({ dsl, schema: compileModel(dsl).schema });

  beforeAll(async () => {
    db = await createTestDatabase();
    store = new PostgresEventStore(db.pool, { pollIntervalMs: 50 });
    await run({ type: 'CreateModel', modelId: 'm1', name: 'one', content: content('type user') });
    await run({ type: 'CreateModel', modelId: 'm2', name: 'two', content: content('type user\ntype team') });
  });
  afterAll(async () => {
    await store.close();
    await db.drop();
  });

  it('loads from the models stream, keeps the answer until invalidated or expired', async () => {
    const models = new ActiveModels({ store, clock });
    expect(await models.get('t')).toBeNull();
    await run({ type: 'ActivateModel', modelId: 'm1' });
    expect(await models.get('t')).toBeNull(); // cached
    models.invalidate('t');
    const first = await models.get('t');
    expect([first?.modelId, first?.version, first?.typesystem.hasType('team')]).toEqual(['m1', 1, false]);

    await run({ type: 'ActivateModel', modelId: 'm2' });
    clock.advance(MODEL_CACHE_TTL_MS - 1);
    expect((await models.get('t'))?.modelId).toBe('m1');
    clock.advance(1);
    const second = await models.get('t');
    expect([second?.modelId, second?.typesystem.hasType('team')]).toEqual(['m2', true]);
  });
});
