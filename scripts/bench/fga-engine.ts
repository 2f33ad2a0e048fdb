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
import { aliceDocument, DOCUMENTS, DRIVE_MODEL, driveTuples, pick, USERS, viewerCheck } from './drive-dataset.ts';

function buildStore(): MemoryTupleStore {
  const store = new MemoryTupleStore();
  driveTuples((text) => store.add(parseTuple(text)));
  return store;
}

async function measureChecks(engine: AuthorizationEngine, label: string, requests: CheckRequest[]): Promise<void> {
  let allowed = 0;
  const started = performance.now();
  for (const request of requests) if ((await engine.check(request)).allowed) allowed += 1;
  const perSecond = Math.round(requests.length / ((performance.now() - started) / 1000));
  console.log(`${label}: ${perSecond.toLocaleString('en')} checks/s (${requests.length} checks, ${allowed} allowed)`);
}

async function main(): Promise<void> {
  const { typesystem } = compileModel(DRIVE_MODEL);
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
  const inherited = Array.from({ length: 20_000 }, () => viewerCheck('alice', aliceDocument()));

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
