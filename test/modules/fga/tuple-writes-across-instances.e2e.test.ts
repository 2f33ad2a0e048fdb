import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInstanceBeside } from '../../support/second-instance.ts';
import type { TestService } from '../../support/service.ts';
import { DOCS } from './support/fga-fixture.ts';
import { startFgaService, type FgaTestService } from './support/fga-service.ts';

const viewer = (objectId: string, subjectId = 'ann') => ({ objectType: 'document', objectId, relation: 'viewer', subjectType: 'user', subjectId });

/**
 * Two instances write one tenant's tuples. Each decides on its own in-memory index, which learns
 * the other's writes only from the log: the tenant stream's revision is what keeps TUPLE_EXISTS
 * exact between them.
 */
describe('tuple writes on two instances', () => {
  let a: FgaTestService;
  let b: TestService;
  const onB = async (method: string, url: string, body: unknown) =>
    b.request({ method, url, body, tenant: 'acme', token: await b.token({ sub: 'acme-caller', tenant: 'acme', roles: ['admin'] }) });

  beforeAll(async () => {
    a = await startFgaService();
    b = await startInstanceBeside(a, () => {});
    await a.activeModel(DOCS);
  });
  afterAll(async () => {
    await b?.close();
    await b?.db.pool.end();
    await a?.close();
  });

  it('lets exactly one of racing writes of a tuple win, whichever instance takes them', async () => {
    for (const objectId of ['race1', 'race2', 'race3']) {
      const race = await Promise.all([
        a.call('POST', '/api/fga/tuples', viewer(objectId)),
        onB('POST', '/api/fga/tuples', viewer(objectId)),
        a.call('POST', '/api/fga/tuples', viewer(objectId)),
        onB('POST', '/api/fga/tuples', viewer(objectId)),
      ]);
      expect(race.map((r) => r.status).sort()).toEqual([201, 409, 409, 409]);
    }
  });

  it("decides on the other instance's last change, not on an index behind it", async () => {
    expect((await a.call('POST', '/api/fga/tuples', viewer('flip'))).status).toBe(201);
    for (let round = 0; round < 2; round += 1) {
      // A's index stops reading the log, so it still holds the tuple B deletes.
      await a.service.fga.indexes.stop();
      expect((await onB('POST', '/api/fga/tuples/bulk', { deletes: [viewer('flip')] })).body.data.deleted).toBe(1);
      const resumed = new Promise((resolve) => setTimeout(resolve, 300)).then(() => a.service.fga.indexes.start());
      // A's index says "exists": a refusal no append checks is decided again once the index has read the log.
      const rewritten = await a.call('POST', '/api/fga/tuples', viewer('flip'));
      await resumed;
      expect(rewritten.status).toBe(201);
      expect((await onB('POST', '/api/fga/tuples', viewer('flip'))).body.error.code).toBe('TUPLE_EXISTS');
    }
  });

  it('applies overlapping bulk requests from both instances atomically, each tuple once', async () => {
    const batch = (from: number) => ({ writes: Array.from({ length: 40 }, (_, i) => viewer(`bulk${from + i}`)) });
    // Four requests over 100 tuples: 0-39 and 30-69 overlap, 60-99 overlaps the second, 100-139 none.
    const answers = await Promise.all([a.call('POST', '/api/fga/tuples/bulk', batch(0)), onB('POST', '/api/fga/tuples/bulk', batch(30)), a.call('POST', '/api/fga/tuples/bulk', batch(60)), onB('POST', '/api/fga/tuples/bulk', batch(100))]);
    const won = answers.map((answer) => answer.status === 200);
    for (const answer of answers) expect(answer.status === 200 || answer.body.error.code === 'TUPLE_EXISTS', JSON.stringify(answer.body)).toBe(true);
    // Neighbours overlap: never both won. The last batch overlaps nothing.
    expect(won[0] && won[1]).toBe(false);
    expect(won[1] && won[2]).toBe(false);
    expect(won[3]).toBe(true);
    const written = answers.flatMap((answer, i) => (won[i] ? batch([0, 30, 60, 100][i]!).writes.map((t) => t.objectId) : []));
    expect(await a.service.runner.waitFor(await a.store.lastWrittenPosition(), 10_000, ['fga-history'])).toBe(true);
    const { rows } = await a.db.pool.query<{ object_id: string }>("select object_id from fga_tuples where tenant_id = 'acme' and object_id like 'bulk%' order by object_id");
    expect(rows.map((row) => row.object_id)).toEqual(written.sort());
  });
});
