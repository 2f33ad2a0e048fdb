/**
 * List-objects benchmark: memory and latency of very large answers over real HTTP (a listening
 * server, load from a separate process). One user sees `--objects` documents (default 20,000)
 * through a group and a folder, alice sees 900 through nested groups and folders. Prints the
 * process RSS idle (index loaded, before the load) and its peak under load, for the JSON answer
 * and the NDJSON stream, with req/s and p50/p99.
 * Usage: npm run bench:list-objects [-- --objects 20000 --requests 400]
 */
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { activateDriveModel, aliceTuples, appendTuples } from './drive-dataset.ts';
import { httpLoad, type LoadPlan } from './http-load.ts';
import { benchService } from './service.ts';
import { fmt, numberOption } from './support.ts';

const TENANT = 'platform';
const OBJECTS = numberOption('objects', 20_000);
const REQUESTS = numberOption('requests', 400);
const CONNECTIONS = 32;
const mib = (bytes: number) => bytes / 1024 / 1024;
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
/** What V8 holds (committed) per heap space, by short name: what grows when the RSS does. */
const heapSpaces = () => new Map(getHeapSpaceStatistics().map((space) => [space.space_name.replace(/_space$/, ''), space.space_size]));
const spacesText = (spaces: Map<string, number>) =>
  ['new', 'old', 'large_object', 'new_large_object']
    .filter((name) => spaces.has(name))
    .map((name) => `${name.replace('_object', '')} ${fmt(mib(spaces.get(name)!))}`)
    .join(', ');
const heapAfter = () => {
  gc();
  return process.memoryUsage().heapUsed;
};

async function measure({ service, store, inject }: Awaited<ReturnType<typeof benchService>>): Promise<void> {
  const admin = { sub: 'bench', tid: TENANT, roles: ['admin'], acr: 'aal1', amr: ['pwd'] };
  const { token } = await service.tokens.issue(admin, 3600);
  const modelId = await activateDriveModel(inject, token);
  const tuples = ['group:bob-team#member@user:bob', 'folder:bob-root#viewer@group:bob-team#member'];
  for (let d = 0; d < OBJECTS; d += 1) tuples.push(`document:bob-doc${d}#parent@folder:bob-root`);
  aliceTuples((text) => tuples.push(text));
  await service.runner.waitFor(await appendTuples(store, TENANT, modelId, tuples), 600_000, ['fga-history']);
  await service.fga.indexes.storeOf(TENANT);

  await service.app.listen({ host: '127.0.0.1', port: 0 });
  const address = service.app.server.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/api/fga/list-objects`;
  const headers = { 'x-tenant': TENANT, authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const body = (subjectId: string, extra: object = {}) => JSON.stringify({ objectType: 'document', relation: 'viewer', subjectType: 'user', subjectId, ...extra });

  // Idle: the seeding's garbage collected, and V8 given time to hand back the pages it freed (one
  // collection and half a second left the old generation anywhere from 56 to 91 MiB).
  for (let round = 0; round < 3; round += 1) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  const idle = process.memoryUsage().rss;
  const idleSpaces = heapSpaces();
  console.log(
    `list-objects benchmark (node ${process.version}), ${CONNECTIONS} connections, ${fmt(REQUESTS)} requests each; ` +
      `bob sees ${fmt(OBJECTS)} documents, alice 900; RSS idle ${fmt(mib(idle))} MiB (V8 heap spaces, MiB: ${spacesText(idleSpaces)})`,
  );
  const runs: [string, Omit<LoadPlan, 'url' | 'concurrency' | 'requests'>][] = [
    ['JSON, bob', { headers, bodies: [body('bob')] }],
    ['NDJSON stream, bob', { headers: { ...headers, accept: 'application/x-ndjson' }, bodies: [body('bob')] }],
    ['JSON, alice', { headers, bodies: [body('alice')] }],
  ];
  console.log('answer                                   req/s   p50 ms   p99 ms  peak RSS MiB  of idle  failures');
  for (const [label, plan] of runs) {
    let peak = process.memoryUsage().rss;
    let peakHeap = 0;
    let peakSpaces = heapSpaces();
    const sampler = setInterval(() => {
      const { rss, heapUsed } = process.memoryUsage();
      if (rss > peak) peakSpaces = heapSpaces();
      peak = Math.max(peak, rss);
      peakHeap = Math.max(peakHeap, heapUsed);
    }, 20);
    const result = await httpLoad({ ...plan, url, concurrency: CONNECTIONS, requests: REQUESTS });
    clearInterval(sampler);
    console.log(
      `${label.padEnd(38)} ${fmt(result.perSecond).padStart(7)} ${fmt(result.p50, 1).padStart(8)} ${fmt(result.p99, 1).padStart(8)} ` +
        `${fmt(mib(peak)).padStart(13)} ${`${fmt(peak / idle, 2)}x`.padStart(8)} ${String(result.failures).padStart(9)}` +
        `  (heap used: peak ${fmt(mib(peakHeap))} MiB, ${fmt(mib(heapAfter()))} MiB after a full GC; spaces at the RSS peak: ${spacesText(peakSpaces)})`,
    );
  }
}

// The relay would publish every seeded event to the in-process bus: not what is measured here.
const bench = await benchService({ IAM_RELAY_ENABLED: 'false' });
await measure(bench)
  .catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(() => bench.close());
