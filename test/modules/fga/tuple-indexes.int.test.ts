import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fgaHistoryProjection } from '../../../projections/fga-history.ts';
import { TupleIndexes } from '../../../src/modules/fga/serving/tuple-indexes.ts';
import { parseTuple, tupleToString } from '../../../src/modules/fga/tuple.ts';
import { legacyTupleStreamId } from '../../../src/modules/fga/tuples/events.ts';
import { systemClock } from '../../../src/platform/clock.ts';
import { toNewEvents } from '../../../src/platform/commands/handle-command.ts';
import { PostgresEventStore } from '../../../src/platform/eventstore/postgres.ts';
import { rebuildProjection } from '../../../src/platform/projections/rebuild.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';

const logger = pino({ level: 'silent' });

describe('per-tenant tuple indexes fed by the event log', () => {
  let db: TestDatabase;
  let store: PostgresEventStore;
  const modelEvents: string[] = [];
  const indexes: TupleIndexes[] = [];
  const startIndexes = async () => {
    const started = new TupleIndexes({ store, pool: db.pool, logger, onModelEvent: (tenant) => modelEvents.push(tenant) });
    await started.start();
    indexes.push(started);
    return started;
  };
  let last = 0n;
  const record = async (tenant: string, type: 'FgaTupleWritten' | 'FgaTupleDeleted', text: string) => {
    const tuple = parseTuple(text);
    const events = toNewEvents([{ type, data: { tuple, modelId: 'm1' } }], { tenantId: tenant, actor: 'test' }, systemClock);
    last = (await store.append(legacyTupleStreamId(tenant, tuple), events)).position;
  };
  // What an index holds once it has applied everything recorded so far (visibility may lag: other
  // test files share the cluster's snapshot bound).
  const contents = async (index: TupleIndexes, tenant: string) => {
    expect(await index.waitFor(last, 5000)).toBe(true);
    return [...(await index.storeOf(tenant)).tuples()].map(tupleToString).sort();
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    store = new PostgresEventStore(db.pool, { pollIntervalMs: 50 });
    await record('a', 'FgaTupleWritten', 'doc:1#viewer@user:ann');
    await record('a', 'FgaTupleWritten', 'doc:2#viewer@user:ann');
    await record('a', 'FgaTupleDeleted', 'doc:2#viewer@user:ann');
    await record('b', 'FgaTupleWritten', 'doc:1#viewer@user:bob');
  });
  afterAll(async () => {
    for (const index of indexes) await index.stop();
    await store.close();
    await db.drop();
  });

  it('loads a tenant from the log when the projection has not caught up, then follows it', async () => {
    const index = await startIndexes();
    expect(await contents(index, 'a')).toEqual(['doc:1#viewer@user:ann']);
    await record('a', 'FgaTupleWritten', 'group:g#member@user:cid');
    await record('b', 'FgaTupleWritten', 'doc:9#viewer@user:bob');
    await record('a', 'FgaTupleDeleted', 'doc:1#viewer@user:ann');
    expect(await contents(index, 'a')).toEqual(['group:g#member@user:cid']);
    expect(await contents(index, 'b')).toEqual(['doc:1#viewer@user:bob', 'doc:9#viewer@user:bob']);
  });

  it('loads from the read model with the position its checkpoint gives, then follows the log', async () => {
    await rebuildProjection(fgaHistoryProjection, store, db.pool, logger);
    const index = await startIndexes();
    expect(await contents(index, 'a')).toEqual(['group:g#member@user:cid']);
    await record('a', 'FgaTupleWritten', 'doc:1#viewer@user:ann');
    expect(await contents(index, 'a')).toEqual(['doc:1#viewer@user:ann', 'group:g#member@user:cid']);
  });

  it('reports model events of a tenant, so its cached model is dropped', async () => {
    const index = indexes[0]!;
    const events = toNewEvents([{ type: 'FgaModelActivated', data: { modelId: 'm2', previousModelId: null } }], { tenantId: 'c', actor: 'test' }, systemClock);
    const position = (await store.append('fgamodels-c', events)).position;
    expect(await index.waitFor(position, 5000)).toBe(true);
    expect(modelEvents).toContain('c');
  });
});
