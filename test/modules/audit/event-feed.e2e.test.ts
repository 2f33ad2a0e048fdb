import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeliveredMessage, PublicEvent } from '../../../src/platform/bus/port.ts';
import { newId } from '../../../src/platform/ids.ts';
import { startFgaService, type FgaTestService } from '../fga/support/fga-service.ts';

const TOPIC = 'iam.events';
const NDJSON = 'application/x-ndjson';

interface Page {
  events: PublicEvent[];
  next: string | null;
}

describe('GET /api/events: the tenant history in the topic envelope', () => {
  let t: FgaTestService;
  const topic: PublicEvent[] = [];
  let janeId: string;

  const get = (query: string, options: { tenant?: string; roles?: string[] } = {}) => t.call('GET', `/api/events${query}`, undefined, options);
  const ndjson = async (query: string, tenant = 'acme') =>
    t.request({ method: 'GET', url: `/api/events${query}`, tenant, token: await t.token({ sub: 'reader', tenant, roles: ['admin'] }), headers: { accept: NDJSON } });
  /** Every page from `query`, following `next`. */
  async function allPages(query: string, limit: number): Promise<PublicEvent[]> {
    const events: PublicEvent[] = [];
    for (let after = ''; ; ) {
      const response = await get(`?limit=${limit}${query}${after}`);
      expect(response.status).toBe(200);
      const page = response.body.data as Page;
      expect(page.events.length).toBeLessThanOrEqual(limit);
      events.push(...page.events);
      if (page.next === null) return events;
      expect(page.next).toBe(page.events.at(-1)!.position);
      after = `&after=${page.next}`;
    }
  }

  beforeAll(async () => {
    t = await startFgaService();
    const jane = await t.call('POST', '/api/users', { email: 'jane@acme.test', firstName: 'Jane', password: 'Str0ngPass!' });
    expect(jane.status).toBe(201);
    janeId = jane.body.data.id;
    expect((await t.call('PUT', `/api/users/${janeId}`, { lastName: 'Doe' })).status).toBe(200);
    expect((await t.call('POST', '/api/roles', { name: 'auditor', permissions: ['view:audit'] })).status).toBe(201);
    expect((await t.call('POST', '/api/users', { email: 'bob@beta.test', password: 'Str0ngPass!' }, { tenant: 'beta' })).status).toBe(201);
    await t.service.bus.subscribe({
      groupId: `feed-test-${newId()}`,
      topic: TOPIC,
      fromBeginning: true,
      handler: async (messages: readonly DeliveredMessage[]) => {
        topic.push(...messages.map((message) => message.value));
      },
    });
  });
  afterAll(() => t.close());

  it("pages every event of the tenant oldest first, each exactly as the topic carries it, and no other tenant's", async () => {
    const events = await allPages('', 2);
    expect(events.length).toBeGreaterThan(5);
    expect(new Set(events.map((e) => e.tenantId))).toEqual(new Set(['acme']));
    const positions = events.map((e) => BigInt(e.position));
    for (let i = 1; i < positions.length; i += 1) expect(positions[i]! > positions[i - 1]!).toBe(true);
    // The relay publishes from the same log: the topic's acme messages, in order, are the feed.
    await expect.poll(() => topic.filter((e) => e.tenantId === 'acme').length, { timeout: 10_000 }).toBeGreaterThanOrEqual(events.length);
    expect(topic.filter((e) => e.tenantId === 'acme').slice(0, events.length)).toEqual(events);
    const created = events.find((e) => e.type === 'UserCreated' && (e.data as { userId: string }).userId === janeId)!;
    expect(created.data).toMatchObject({ email: 'jane@acme.test', firstName: 'Jane' });
    expect(created.data).not.toHaveProperty('passwordHash');
    expect(JSON.stringify(events)).not.toMatch(/argon2/);
  });

  it('filters by types, stream prefix and time, inclusive', async () => {
    const events = await allPages('', 1000);
    const wanted = new Set(['UserCreated', 'RoleCreated']);
    expect((await allPages('&types=UserCreated,RoleCreated', 1)).map((e) => e.id)).toEqual(events.filter((e) => wanted.has(e.type)).map((e) => e.id));
    const prefix = `user-acme.${janeId}`;
    const janes = await allPages(`&streamPrefix=${encodeURIComponent(prefix)}`, 100);
    expect(janes.map((e) => e.type)).toEqual(['UserCreated', 'UserProfileUpdated']);
    const [first, second] = janes;
    const between = await allPages(`&streamPrefix=${encodeURIComponent(prefix)}&from=${first!.occurredAt}&to=${second!.occurredAt}`, 100);
    expect(between.map((e) => e.id)).toEqual([first!.id, second!.id]);
    const after = await allPages(`&streamPrefix=${encodeURIComponent(prefix)}&from=${new Date(Date.parse(first!.occurredAt) + 1).toISOString()}`, 100);
    expect(after.map((e) => e.id)).toEqual(janes.filter((e) => e.occurredAt > first!.occurredAt).map((e) => e.id));
  });

  it('streams the same events as NDJSON, one envelope per line', async () => {
    const response = await ndjson('?types=UserCreated,UserProfileUpdated,RoleCreated');
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/x-ndjson/);
    const lines = (response.body as string).trimEnd().split('\n').map((line) => JSON.parse(line) as PublicEvent);
    expect(lines).toEqual(await allPages('&types=UserCreated,UserProfileUpdated,RoleCreated', 1000));
  });

  it('streams a long history complete and in order, and pages it without gap or overlap', async () => {
    const count = 6000;
    const tuples = Array.from({ length: count }, (_, i) => ({ objectType: 'doc', objectId: `d${i}`, relation: 'viewer', subjectType: 'user', subjectId: `u${i}` }));
    const modelId = newId();
    let last = 0n;
    for (let start = 0; start < count; start += 1000) {
      last = (await t.store.appendMulti(
        tuples.slice(start, start + 1000).map((tuple) => ({
          streamId: `fgatuple-beta.doc:${tuple.objectId}#viewer@user:${tuple.subjectId}`,
          expectedRevision: 'no_stream' as const,
          events: [{ id: newId(), type: 'FgaTupleWritten', data: { tuple, modelId }, metadata: { tenantId: 'beta', actor: 'bulk', occurredAt: new Date().toISOString() } }],
        })),
      )).at(-1)!.position;
    }
    // Other transactions of the cluster may hold the visibility bound back a moment: the stream ends at the head it sees.
    await expect.poll(() => t.store.headPosition(), { timeout: 10_000 }).toBeGreaterThanOrEqual(last);
    const response = await ndjson('?types=FgaTupleWritten', 'beta');
    const lines = (response.body as string).trimEnd().split('\n').map((line) => JSON.parse(line) as PublicEvent);
    expect(lines.map((e) => (e.data as { tuple: { objectId: string } }).tuple.objectId)).toEqual(tuples.map((tuple) => tuple.objectId));
    for (let i = 1; i < lines.length; i += 1) expect(BigInt(lines[i]!.position) > BigInt(lines[i - 1]!.position)).toBe(true);
    const paged: PublicEvent[] = [];
    for (let after = ''; ; ) {
      const page = (await get(`?types=FgaTupleWritten&limit=1000${after}`, { tenant: 'beta' })).body.data as Page;
      paged.push(...page.events);
      if (!page.next) break;
      after = `&after=${page.next}`;
    }
    expect(paged).toEqual(lines);
  });

  it('refuses malformed or out-of-range input and positions of another tenant with 400 and details', async () => {
    const betaPosition = ((await get('?limit=1', { tenant: 'beta' })).body.data as Page).events[0]!.position;
    const cases: [string, string][] = [
      ['?after=abc', 'querystring.after'],
      ['?after=-1', 'querystring.after'],
      ['?after=99999999999999999999', 'querystring.after'],
      ['?limit=0', 'querystring.limit'],
      ['?limit=1001', 'querystring.limit'],
      ['?limit=ten', 'querystring.limit'],
      ['?from=yesterday', 'querystring.from'],
      ['?to=2026-13-01T00:00:00Z', 'querystring.to'],
      ['?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z', 'querystring.from'],
      ['?types=NoSuchEvent', 'querystring.types'],
      [`?after=${betaPosition}`, 'querystring.after'],
      [`?after=${BigInt(betaPosition) + 1n}`, 'querystring.after'],
    ];
    for (const [query, path] of cases) {
      const response = await get(query);
      expect(response.status, query).toBe(400);
      expect(response.body.error.code, query).toBe('VALIDATION_ERROR');
      expect(response.body.error.details.map((d: { path: string }) => d.path), query).toContain(path);
    }
    const streamed = await ndjson(`?after=${betaPosition}`);
    expect(streamed.status).toBe(400);
    expect(streamed.body.error.code).toBe('VALIDATION_ERROR');
  });

  it('needs view:audit', async () => {
    expect((await get('', { roles: ['user'] })).status).toBe(403);
    expect((await get('?limit=1', { roles: ['auditor'] })).status).toBe(200);
  });
});
