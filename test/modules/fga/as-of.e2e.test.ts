import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTuple, type RelationTuple } from '../../../src/modules/fga/index.ts';
import { TupleHistoryReader } from '../../../src/modules/fga/serving/tuple-history.ts';
import { OverlayTupleReader, RecentTupleChanges } from '../../../src/modules/fga/serving/tuple-overlay.ts';
import { MODEL, NEXT_MODEL } from './support/documents-model.ts';
import { startFgaService, type FgaTestService } from './support/fga-service.ts';

const USERS = ['anne', 'bob', 'carl'];
const DOCUMENTS = ['d1', 'd2', 'd3'];
const QUERIES = [
  ...USERS.flatMap((user) =>
    DOCUMENTS.flatMap((doc) => ['viewer', 'can_read', 'editor'].map((relation) => ({ url: '/api/fga/check', body: { objectType: 'document', objectId: doc, relation, subjectType: 'user', subjectId: user } }))),
  ),
  ...USERS.flatMap((user) => ['viewer', 'can_read'].map((relation) => ({ url: '/api/fga/list-objects', body: { objectType: 'document', relation, subjectType: 'user', subjectId: user } }))),
  { url: '/api/fga/check', body: { objectType: 'document', objectId: 'd1', relation: 'viewer', subjectType: 'group', subjectId: 'eng', subjectRelation: 'member' } },
];

interface Observation {
  at: string;
  answers: { status: number; body: unknown }[];
}

/**
 * Twice: every instant looked up in the tuple history, and (the default for recent instants) read
 * from the live index with the changes since undone.
 */
describe.each([
  { path: 'history lookups', recentChanges: '0' },
  { path: 'live index and an overlay of the changes since', recentChanges: '10000' },
])('FGA check and list-objects with asOf ($path): authorization as it stood at an instant', ({ recentChanges }) => {
  let t: FgaTestService;
  const observations: Observation[] = [];
  let beforeAnyModel: string;
  const everWritten = new Map<string, RelationTuple>();

  const ask = async (at?: string) =>
    Promise.all(
      QUERIES.map(async ({ url, body }) => {
        const response = await t.call('POST', url, at ? { ...body, asOf: at } : body);
        return { status: response.status, body: response.status === 200 ? response.body.data : response.body.error.code };
      }),
    );
  /** Records the instant and what the live engine answers now; no write shares its millisecond. */
  async function observe(): Promise<void> {
    await sleep(3);
    const at = new Date().toISOString();
    observations.push({ at, answers: await ask() });
    await sleep(3);
  }
  const bulk = async (writes: string[], deletes: string[] = []) => {
    for (const text of writes) everWritten.set(text, parseTuple(text));
    const response = await t.call('POST', '/api/fga/tuples/bulk', { writes: writes.map(parseTuple), deletes: deletes.map(parseTuple) });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
  };

  beforeAll(async () => {
    t = await startFgaService({ env: { FGA_AS_OF_RECENT_CHANGES: recentChanges } });
    await sleep(3);
    beforeAnyModel = new Date().toISOString();
    const first = await t.activeModel(MODEL);
    await observe();
    await bulk(['document:d1#owner@user:anne', 'document:d2#parent@folder:f1', 'folder:f1#viewer@group:eng#member', 'group:eng#member@user:bob']);
    await observe();
    await bulk(['document:d3#viewer@user:*', 'document:d3#blocked@user:carl'], ['group:eng#member@user:bob']);
    await observe();
    await bulk(['group:eng#member@user:carl', 'group:eng#member@user:bob']); // bob's second lifetime
    await observe();
    await t.activeModel(NEXT_MODEL); // user:* no longer allowed: d3's wildcard tuple stands but no longer counts
    await observe();
    await bulk(['document:d2#editor@user:anne', 'document:d1#viewer@group:eng#member'], ['document:d3#blocked@user:carl', 'document:d1#owner@user:anne']);
    await observe();
    await bulk([], ['group:eng#member@user:bob', 'document:d3#viewer@user:*']);
    await observe();
    // Back to the first model: the same model and tuples may answer differently at different instants.
    expect((await t.call('POST', `/api/fga/models/${first}/activate`)).status).toBe(200);
    await observe();
  });
  afterAll(() => t.close());

  it('answers at every observed instant exactly what the engine answered then, and says which instant', async () => {
    expect(new Set(observations.map((o) => JSON.stringify(o.answers))).size).toBeGreaterThan(5);
    for (const { at, answers } of observations) {
      const past = await ask(at);
      expect(past.map((answer) => (answer.status === 200 ? { ...answer, body: { ...(answer.body as object), asOf: undefined } } : answer)), at).toEqual(
        answers.map((answer) => (answer.status === 200 ? { ...answer, body: { ...(answer.body as object), asOf: undefined } } : answer)),
      );
      for (const answer of past.filter((a) => a.status === 200)) expect((answer.body as { asOf: string }).asOf).toBe(at);
    }
  });

  it('holds, in the overlay, for every tuple ever written and at every instant, what the history holds', async () => {
    const indexes = t.service.fga.indexes;
    const index = await indexes.storeOf('acme');
    // One instance kept across the instants (the first one's lifetimes serve the later ones), one fresh per instant.
    const kept = new RecentTupleChanges(t.db.pool, 1000);
    for (const { at } of [{ at: beforeAnyModel }, ...observations]) {
      const instant = new Date(at);
      const history = new TupleHistoryReader(t.db.pool, 'acme', instant);
      for (const recent of [kept, new RecentTupleChanges(t.db.pool, 1000)]) {
        const changes = await recent.since('acme', instant);
        expect(changes, at).not.toBeNull();
        expect(changes!.checkpoint).toBeLessThanOrEqual(indexes.position.current);
        const overlaid = new OverlayTupleReader(index, changes!.overlay, () => indexes.position.current, indexes.position.current);
        for (const [text, tuple] of everWritten) {
          expect(overlaid.hasTuple(tuple), `${text} at ${at}`).toBe(await history.hasTuple(tuple));
          expect(new Set(overlaid.readSubjectIds(tuple)), `${text} at ${at}`).toEqual(new Set(await history.readSubjectIds(tuple)));
          expect(new Set(overlaid.readObjectIds(tuple)), `${text} at ${at}`).toEqual(new Set(await history.readObjectIds(tuple)));
        }
      }
    }
    const small = new RecentTupleChanges(t.db.pool, 2);
    expect(await small.since('acme', new Date(beforeAnyModel)), 'more changes than the limit').toBeNull();
    expect(await small.since('acme', new Date(new Date(beforeAnyModel).getTime() - 1)), 'an earlier instant, more changes still').toBeNull();
    expect(await small.since('acme', new Date(observations.at(-1)!.at)), 'the last instant: fewer changes since').not.toBeNull();
  });

  it('answers NO_ACTIVE_MODEL for an instant after the tenant began but before any model', async () => {
    const response = await t.call('POST', '/api/fga/check', { ...QUERIES[0]!.body, asOf: beforeAnyModel });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('NO_ACTIVE_MODEL');
  });

  it('refuses an instant in the future, before the tenant existed or malformed with 400 and details', async () => {
    const future = new Date(Date.now() + 3_600_000).toISOString();
    for (const asOf of [future, '2020-01-01T00:00:00Z', 'yesterday', '2026-01-01', '2026-01-01T10:00:00']) {
      for (const url of ['/api/fga/check', '/api/fga/list-objects']) {
        const body = url.endsWith('check') ? QUERIES[0]!.body : QUERIES.at(-2)!.body;
        const response = await t.call('POST', url, { ...body, asOf });
        expect(response.status, `${url} ${asOf}`).toBe(400);
        expect(response.body.error.code).toBe('VALIDATION_ERROR');
        expect(response.body.error.details.map((d: { path: string }) => d.path)).toContain('body.asOf');
      }
    }
  });

  it('needs view:audit beside debug:fga for asOf, not without it', async () => {
    expect((await t.call('POST', '/api/roles', { name: 'fga-debugger', permissions: ['debug:fga'] })).status).toBe(201);
    const { at } = observations.at(-1)!;
    const past = await t.call('POST', '/api/fga/check', { ...QUERIES[0]!.body, asOf: at }, { roles: ['fga-debugger'] });
    expect(past.status).toBe(403);
    expect(past.body.error.code).toBe('PERMISSION_DENIED');
    expect((await t.call('POST', '/api/fga/check', QUERIES[0]!.body, { roles: ['fga-debugger'] })).status).toBe(200);
  });
});
