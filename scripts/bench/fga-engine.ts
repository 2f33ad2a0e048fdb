/**
 * Micro-benchmark of the pure FGA engine over the in-memory store (no I/O): a Google-Drive-like
 * model with ~1,000,000 tuples in one tenant. Prints checks/second and list-objects latency.
 * Run: npx tsx scripts/bench/fga-engine.ts
 */
import type { CheckRequest } from '../../src/modules/fga/engine/authorization-engine.ts';
import { AuthorizationEngine } from '../../src/modules/fga/engine/authorization-engine.ts';
import { MemoryTupleStore } from '../../src/modules/fga/engine/memory-tuple-store.ts';
import { compileModel } from '../../src/modules/fga/model.ts';
import { parseTuple } from '../../src/modules/fga/tuple.ts';

const MODEL = `
model
  schema 1.1
type user
type group
  relations
    define member: [user, group#member]
type folder
  relations
    define parent: [folder]
    define owner: [user]
    define editor: [user, group#member] or owner or editor from parent
    define viewer: [user, user:*, group#member] or editor or viewer from parent
type document
  relations
    define parent: [folder]
    define owner: [user]
    define editor: [user, group#member] or owner or editor from parent
    define viewer: [user, user:*, group#member] or editor or viewer from parent
`;

const USERS = 20_000;
const GROUPS = 2_000;
const FOLDERS = 10_000;
const DOCUMENTS = 200_000;

// Deterministic pseudo-random numbers (mulberry32), so runs are comparable.
let seed = 42;
function random(): number {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const pick = (n: number): number => Math.floor(random() * n);

function buildStore(): MemoryTupleStore {
  const store = new MemoryTupleStore();
  const add = (text: string) => store.add(parseTuple(text));
  for (let g = 0; g < GROUPS; g += 1) {
    for (let m = 0; m < 40; m += 1) add(`group:g${g}#member@user:u${pick(USERS)}`);
    // A quarter of the groups are nested in a group with a lower number (no cycles, depth ~3).
    if (g > 100 && g % 4 === 0) add(`group:g${pick(g)}#member@group:g${g}#member`);
  }
  for (let f = 0; f < FOLDERS; f += 1) {
    // Each folder below the 100 roots has a parent with a lower number: trees ~9 levels deep.
    if (f >= 100) add(`folder:f${f}#parent@folder:f${pick(f)}`);
    add(`folder:f${f}#owner@user:u${pick(USERS)}`);
    add(`folder:f${f}#viewer@group:g${pick(GROUPS)}#member`);
    if (f % 3 === 0) add(`folder:f${f}#editor@group:g${pick(GROUPS)}#member`);
  }
  for (let d = 0; d < DOCUMENTS; d += 1) {
    add(`document:d${d}#parent@folder:f${pick(FOLDERS)}`);
    add(`document:d${d}#owner@user:u${pick(USERS)}`);
    add(`document:d${d}#viewer@user:u${pick(USERS)}`);
    add(`document:d${d}#viewer@user:u${pick(USERS)}`);
    if (d % 2 === 0) add(`document:d${d}#editor@user:u${pick(USERS)}`);
    if (d % 2000 === 0) add(`document:d${d}#viewer@user:*`);
  }
  // alice sees exactly 1,000 documents: 880 under her team's folder tree (root > 8 folders > 10
  // folders each > 11 documents each), 20 shared with her directly and the 100 public ones.
  add('group:alice-team#member@user:alice');
  add('group:alice-org#member@group:alice-team#member');
  add('folder:alice-root#viewer@group:alice-org#member');
  for (let s = 0; s < 8; s += 1) {
    add(`folder:alice-sub${s}#parent@folder:alice-root`);
    for (let t = 0; t < 10; t += 1) {
      add(`folder:alice-sub${s}-${t}#parent@folder:alice-sub${s}`);
      for (let d = 0; d < 11; d += 1) add(`document:alice-doc${s}-${t}-${d}#parent@folder:alice-sub${s}-${t}`);
    }
  }
  for (let d = 0; d < 20; d += 1) add(`document:alice-direct${d}#viewer@user:alice`);
  return store;
}

const viewerCheck = (user: string, document: string): CheckRequest => ({
  objectType: 'document',
  objectId: document,
  relation: 'viewer',
  subjectType: 'user',
  subjectId: user,
});

async function measureChecks(engine: AuthorizationEngine, label: string, requests: CheckRequest[]): Promise<void> {
  let allowed = 0;
  const started = performance.now();
  for (const request of requests) if ((await engine.check(request)).allowed) allowed += 1;
  const perSecond = Math.round(requests.length / ((performance.now() - started) / 1000));
  console.log(`${label}: ${perSecond.toLocaleString('en')} checks/s (${requests.length} checks, ${allowed} allowed)`);
}

async function main(): Promise<void> {
  const { typesystem } = compileModel(MODEL);
  const building = performance.now();
  const store = buildStore();
  const buildMs = Math.round(performance.now() - building);
  const heapMb = Math.round(process.memoryUsage().heapUsed / 1e6);
  console.log(`store: ${store.size.toLocaleString('en')} tuples built in ${buildMs} ms, heap ${heapMb} MB`);
  const engine = new AuthorizationEngine(typesystem, store);

  const randomChecks = Array.from({ length: 20_000 }, () => viewerCheck(`u${pick(USERS)}`, `d${pick(DOCUMENTS)}`));
  const directViewers = Array.from({ length: 20_000 }, () => {
    const document = `d${pick(DOCUMENTS)}`;
    const query = { objectType: 'document', objectId: document, relation: 'viewer', subjectType: 'user' };
    const [viewer] = store.readSubjectIds(query);
    return viewerCheck(viewer ?? 'u0', document);
  });
  const inherited = Array.from({ length: 20_000 }, () =>
    viewerCheck('alice', `alice-doc${pick(8)}-${pick(10)}-${pick(11)}`),
  );

  await measureChecks(engine, 'warm-up', randomChecks.slice(0, 2_000));
  await measureChecks(engine, 'random user x random document (mostly denied: walks every path)', randomChecks);
  await measureChecks(engine, 'direct viewer (allowed by one tuple)', directViewers);
  await measureChecks(engine, 'inherited via 2 nested groups and 3 folder levels (allowed)', inherited);
  // The same store answering through promises, as a SQL reader would (without the I/O): the
  // engine's asynchronous path.
  const promising = new AuthorizationEngine(typesystem, {
    readSubjectIds: async (query) => store.readSubjectIds(query),
    readObjectIds: async (query) => store.readObjectIds(query),
    hasTuple: async (tuple) => store.hasTuple(tuple),
  });
  await measureChecks(promising, 'inherited, through a promise-returning reader', inherited);

  const listRequest = { objectType: 'document', relation: 'viewer', subjectType: 'user', subjectId: 'alice' };
  const timings: number[] = [];
  let count = 0;
  for (let run = 0; run < 30; run += 1) {
    const started = performance.now();
    count = (await engine.listObjects(listRequest)).length;
    timings.push(performance.now() - started);
  }
  timings.sort((a, b) => a - b);
  const median = (timings[Math.floor(timings.length / 2)] ?? 0).toFixed(1);
  const fastest = (timings[0] ?? 0).toFixed(1);
  console.log(`list-objects document#viewer for alice: ${count} ids, median ${median} ms, min ${fastest} ms (30 runs)`);
}

await main();
