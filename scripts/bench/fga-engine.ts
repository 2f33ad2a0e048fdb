/**
 * Micro-benchmark of the pure FGA engine over the in-memory store (no I/O): a Google-Drive-like
 * model with ~1,000,000 tuples in one tenant. Prints checks/second and list-objects latency.
 * Run: npx tsx scripts/bench/fga-engine.ts
 */
import { AuthorizationEngine } from '../../src/modules/fga/engine/authorization-engine.ts';
import { MemoryTupleStore } from '../../src/modules/fga/engine/memory-tuple-store.ts';
import { compileModel } from '../../src/modules/fga/model.ts';
import type { RelationTuple } from '../../src/modules/fga/tuple.ts';

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

function tuple(objectType: string, objectId: string, relation: string, subjectType: string, subjectId: string, subjectRelation?: string): RelationTuple {
  return subjectRelation ? { objectType, objectId, relation, subjectType, subjectId, subjectRelation } : { objectType, objectId, relation, subjectType, subjectId };
}

function buildStore(): MemoryTupleStore {
  const store = new MemoryTupleStore();
  for (let g = 0; g < GROUPS; g += 1) {
    for (let m = 0; m < 40; m += 1) store.add(tuple('group', `g${g}`, 'member', 'user', `u${pick(USERS)}`));
    // A quarter of the groups are nested in a group with a lower number (no cycles, depth ~3).
    if (g > 100 && g % 4 === 0) store.add(tuple('group', `g${pick(g)}`, 'member', 'group', `g${g}`, 'member'));
  }
  for (let f = 0; f < FOLDERS; f += 1) {
    if (f >= 100) store.add(tuple('folder', `f${f}`, 'parent', 'folder', `f${pick(f)}`));
    store.add(tuple('folder', `f${f}`, 'owner', 'user', `u${pick(USERS)}`));
    store.add(tuple('folder', `f${f}`, 'viewer', 'group', `g${pick(GROUPS)}`, 'member'));
    if (f % 3 === 0) store.add(tuple('folder', `f${f}`, 'editor', 'group', `g${pick(GROUPS)}`, 'member'));
  }
  for (let d = 0; d < DOCUMENTS; d += 1) {
    store.add(tuple('document', `d${d}`, 'parent', 'folder', `f${pick(FOLDERS)}`));
    store.add(tuple('document', `d${d}`, 'owner', 'user', `u${pick(USERS)}`));
    store.add(tuple('document', `d${d}`, 'viewer', 'user', `u${pick(USERS)}`));
    store.add(tuple('document', `d${d}`, 'viewer', 'user', `u${pick(USERS)}`));
    if (d % 2 === 0) store.add(tuple('document', `d${d}`, 'editor', 'user', `u${pick(USERS)}`));
    if (d % 1000 === 0) store.add(tuple('document', `d${d}`, 'viewer', 'user', '*'));
  }
  // alice sees exactly 1,000 documents: 990 under her team's folder tree, 10 shared with her directly.
  store.add(tuple('group', 'alice-team', 'member', 'user', 'alice'));
  store.add(tuple('group', 'alice-org', 'member', 'group', 'alice-team', 'member'));
  store.add(tuple('folder', 'alice-root', 'viewer', 'group', 'alice-org', 'member'));
  for (let s = 0; s < 9; s += 1) {
    store.add(tuple('folder', `alice-sub${s}`, 'parent', 'folder', 'alice-root'));
    for (let t = 0; t < 10; t += 1) {
      store.add(tuple('folder', `alice-sub${s}-${t}`, 'parent', 'folder', `alice-sub${s}`));
      for (let d = 0; d < 11; d += 1) store.add(tuple('document', `alice-doc${s}-${t}-${d}`, 'parent', 'folder', `alice-sub${s}-${t}`));
    }
  }
  for (let d = 0; d < 10; d += 1) store.add(tuple('document', `alice-direct${d}`, 'viewer', 'user', 'alice'));
  return store;
}

async function measureChecks(engine: AuthorizationEngine, label: string, requests: Parameters<AuthorizationEngine['check']>[0][]): Promise<void> {
  let allowed = 0;
  const started = performance.now();
  for (const request of requests) if ((await engine.check(request)).allowed) allowed += 1;
  const seconds = (performance.now() - started) / 1000;
  console.log(`${label}: ${Math.round(requests.length / seconds).toLocaleString('en')} checks/s (${requests.length} checks, ${allowed} allowed)`);
}

async function main(): Promise<void> {
  const { typesystem } = compileModel(MODEL);
  let started = performance.now();
  const store = buildStore();
  console.log(`store: ${store.size.toLocaleString('en')} tuples built in ${Math.round(performance.now() - started)} ms, heap ${Math.round(process.memoryUsage().heapUsed / 1e6)} MB`);
  const engine = new AuthorizationEngine(typesystem, store);

  const viewerCheck = (user: string, document: string) => ({
    objectType: 'document', objectId: document, relation: 'viewer', subjectType: 'user', subjectId: user,
  });
  const randomChecks = Array.from({ length: 20_000 }, () => viewerCheck(`u${pick(USERS)}`, `d${pick(DOCUMENTS)}`));
  const directViewers = Array.from({ length: 20_000 }, () => {
    const document = `d${pick(DOCUMENTS)}`;
    const [viewer] = store.readSubjectIds({ objectType: 'document', objectId: document, relation: 'viewer', subjectType: 'user' });
    return viewerCheck(viewer ?? 'u0', document);
  });
  const aliceInherited = Array.from({ length: 20_000 }, () => viewerCheck('alice', `alice-doc${pick(9)}-${pick(10)}-${pick(11)}`));

  await measureChecks(engine, 'warm-up', randomChecks.slice(0, 2_000));
  await measureChecks(engine, 'random user x random document (mostly denied, full graph walk)', randomChecks);
  await measureChecks(engine, 'direct viewer (allowed by a tuple)', directViewers);
  await measureChecks(engine, 'inherited through group#member and 2 parent folders (allowed)', aliceInherited);

  const listRequest = { objectType: 'document', relation: 'viewer', subjectType: 'user', subjectId: 'alice' };
  const timings: number[] = [];
  let count = 0;
  for (let run = 0; run < 30; run += 1) {
    started = performance.now();
    count = (await engine.listObjects(listRequest)).length;
    timings.push(performance.now() - started);
  }
  timings.sort((a, b) => a - b);
  const median = timings[Math.floor(timings.length / 2)] ?? 0;
  console.log(`list-objects document#viewer for alice: ${count} ids, median ${median.toFixed(1)} ms, min ${(timings[0] ?? 0).toFixed(1)} ms over ${timings.length} runs`);
}

await main();
