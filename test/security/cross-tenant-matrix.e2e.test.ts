import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpsReceiver, type HttpsReceiver } from '../support/https-receiver.ts';
import { PLATFORM, startTestService, type TestService } from '../support/service.ts';
import { crossTenantFixtures, INTRUSION, type CrossTenantTarget } from './cross-tenant/fixtures.ts';
import { TenantWorld, type Answer } from './cross-tenant/tenant-world.ts';

interface Operation {
  method: string;
  path: string;
  secured: boolean;
}

const METHODS = ['get', 'post', 'put', 'delete', 'patch'];
const OBJECT_REFUSALS = [401, 403, 404];

/** The fixture table's key of an operation: an /api/v1 route shares its /api twin's entry. */
const keyOf = (operation: Operation) => `${operation.method} ${operation.path.replace(/^\/api\/v1\//, '/api/')}`;
const namesAnObject = (operation: Operation) => operation.path.includes('{');
/** Routes the matrix must cover: every one naming an object by id, every authenticated read. */
const mustCover = (operation: Operation) => namesAnObject(operation) || (operation.method === 'GET' && operation.secured);

function filled(path: string, params: Record<string, string> = {}): string {
  return path.replace(/\{(\w+)\}/g, (_, name: string) => {
    if (params[name] === undefined) throw new Error(`the fixture gives no value for {${name}} of ${path}`);
    return encodeURIComponent(params[name]);
  });
}

/**
 * Generated from the OpenAPI document (which is generated from the route declarations): every
 * route naming an object or reading tenant data is called by tenant B's administrator on an
 * object of tenant A, once with B's x-tenant and once with A's. B must be refused (or, for a
 * list or query, answered from B's own data) and no answer may hold any value of A's that B did
 * not send. Afterwards A's positive controls show each object still there and unchanged.
 */
describe('cross-tenant matrix: every route, tenant B never reaches tenant A', () => {
  let t: TestService;
  let receiver: HttpsReceiver;
  let operations: Operation[];
  let platformToken: string;

  beforeAll(async () => {
    receiver = await startHttpsReceiver();
    t = await startTestService({ env: { IAM_ALLOW_PRIVATE_NETWORK_TARGETS: 'true', IAM_OUTBOUND_CA_FILE: receiver.caFile } });
    const document = (await t.request({ method: 'GET', url: '/api/openapi.json' })).body as { paths: Record<string, Record<string, { security?: unknown[] }>> };
    operations = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([method]) => METHODS.includes(method))
        .map(([method, operation]) => ({ method: method.toUpperCase(), path, secured: Boolean(operation.security?.length) })),
    );
    platformToken = await t.token({ sub: 'platform-admin', tenant: PLATFORM, roles: ['admin'] });
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  it('has a fixture for every route that names an object or reads tenant data, and none for a route that is gone', () => {
    const keys = new Set(operations.map(keyOf));
    const missing = [...new Set(operations.filter(mustCover).map(keyOf))].filter((key) => !crossTenantFixtures[key]);
    const stale = Object.keys(crossTenantFixtures).filter((key) => !keys.has(key));
    expect(operations.filter(mustCover).length).toBeGreaterThan(40);
    expect(missing, `routes without a cross-tenant fixture: add them to test/security/cross-tenant/fixtures.ts`).toEqual([]);
    expect(stale, 'fixtures of routes the OpenAPI document no longer has').toEqual([]);
  });

  it("refuses every route to tenant B's administrator on tenant A's objects, and A's objects stay intact", async () => {
    const a = await TenantWorld.create(t, platformToken, 'tenant-a', receiver.url);
    const b = await TenantWorld.create(t, platformToken, 'tenant-b', receiver.url);
    // B has data of the same shape (an active model with the same types), so its answers are real ones.
    await b.tuple();
    await b.webhook();

    const failures: string[] = [];
    const controls: { route: string; control: NonNullable<CrossTenantTarget['control']> }[] = [];
    const covered = operations.filter((operation) => crossTenantFixtures[keyOf(operation)]);
    for (const operation of covered) {
      const route = `${operation.method} ${operation.path}`;
      const target = await crossTenantFixtures[keyOf(operation)]!(a);
      const url = filled(operation.path, target.params);
      for (const tenant of [b.name, a.name]) {
        const answer = await t.request({ method: operation.method, url, tenant, token: b.adminToken, ...(target.body === undefined ? {} : { body: target.body }) });
        const sent = `${url} ${tenant} ${JSON.stringify(target.body ?? null)}`;
        const problem = judge(operation, target, answer, tenant === a.name, [...a.markers].filter((marker) => !sent.includes(marker)));
        if (problem) failures.push(`${route} as B with x-tenant ${tenant === a.name ? 'A' : 'B'}: ${problem}`);
      }
      controls.push({ route, control: { url: operation.method === 'GET' ? url : undefined, ...target.control } as NonNullable<CrossTenantTarget['control']> });
    }
    expect(covered.length).toBeGreaterThan(40);

    for (const { route, control } of controls) {
      if (!control.url) {
        failures.push(`${route}: the fixture names no control GET`);
        continue;
      }
      const token = control.as === 'platform' ? platformToken : a.adminToken;
      const seen = await t.request({ method: 'GET', url: control.url, tenant: control.as === 'platform' ? PLATFORM : a.name, token });
      const text = JSON.stringify(seen.body);
      if (seen.status !== 200 || !text.includes(control.shows)) failures.push(`${route}: A's control GET ${control.url} answered ${seen.status} without ${control.shows}`);
      if (text.includes(INTRUSION)) failures.push(`${route}: A's control GET ${control.url} shows what B wrote`);
    }
    expect(failures).toEqual([]);
  });
});

/** Why B's answer is wrong, or undefined when it is a refusal (or B's own data) holding nothing of A's. */
function judge(operation: Operation, target: CrossTenantTarget, answer: Answer, spoofedTenant: boolean, markers: string[]): string | undefined {
  const text = JSON.stringify(answer.body);
  const leaked = markers.filter((marker) => text.includes(marker));
  if (leaked.length) return `answered ${answer.status} holding A's ${leaked.join(', ')}`;
  if (target.grants?.(answer)) return `answered ${answer.status} granting A's data: ${text}`;
  // A token of B with A's x-tenant is refused whatever the route; B's own requests by the route's kind.
  const refusals = spoofedTenant ? [...OBJECT_REFUSALS, ...(target.refusals ?? [])] : target.refusals ?? (namesAnObject(operation) ? OBJECT_REFUSALS : undefined);
  if (refusals ? !refusals.includes(answer.status) : answer.status >= 500) return `answered ${answer.status} (expected ${refusals?.join(' or ') ?? 'below 500'}): ${text}`;
  return undefined;
}
