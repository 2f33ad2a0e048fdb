/**
 * FGA service benchmark: a Google-Drive-like model with ~1,000,000 tuples in one tenant, seeded
 * through events (the same FgaTupleWritten events the API appends, in batched multi-stream
 * appends) and projected; then the tenant's in-memory index is loaded from the read model and
 * checks run in-process and over HTTP (a real listening server, load from a separate process),
 * with list-objects latency for a user who sees 1,000 documents and the memory the index takes.
 * Usage: npm run bench:fga
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { CheckRequest } from '../../src/modules/fga/engine/authorization-engine.ts';
import { activateDriveModel, aliceDocument, appendTuples, DOCUMENTS, driveTuples, pick, USERS, viewerCheck } from './drive-dataset.ts';
import { httpLoad } from './http-load.ts';
import { benchService, timed } from './service.ts';
import { fmt } from './support.ts';

const TENANT = 'platform';
const BATCH = 1000;
const APPENDERS = 3;

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const heapMb = () => {
  gc();
  return process.memoryUsage().heapUsed / 1e6;
};

async function main(): Promise<void> {
  // The relay would publish every seeded event to the in-process bus: not what is measured here.
  const bench = await benchService({ IAM_RELAY_ENABLED: 'false' });
  try {
    await measure(bench);
  } finally {
    await bench.close();
  }
}

async function measure({ service, store, inject }: Awaited<ReturnType<typeof benchService>>): Promise<void> {
  const token = (await service.tokens.issue({ sub: 'bench', tid: TENANT, roles: ['admin'], acr: 'aal1', amr: ['pwd'] }, 3600)).token;
  console.log(`fga benchmark (node ${process.version}), tenant '${TENANT}', Google-Drive-like model`);

  const modelId = await activateDriveModel(inject, token);

  const unique = new Set<string>();
  driveTuples((text) => unique.add(text));
  const texts = [...unique];
  unique.clear();
  const seeding = performance.now();
  const last = await appendTuples(store, TENANT, modelId, texts, { batch: BATCH, appenders: APPENDERS, progress: true });
  const appendSeconds = (performance.now() - seeding) / 1000;
  console.log(`seeded ${fmt(texts.length)} tuples as events in ${fmt(appendSeconds, 1)} s (${fmt(texts.length / appendSeconds)} tuples/s, ${BATCH} streams per append, ${APPENDERS} appenders)`);
  texts.length = 0;
  await service.runner.waitFor(last, 3_600_000, ['fga-history']);
  console.log(`fga projection caught up ${fmt((performance.now() - seeding) / 1000, 1)} s after seeding began`);

  const heapBefore = heapMb();
  const loading = performance.now();
  const store1M = await service.fga.indexes.storeOf(TENANT);
  const loadSeconds = (performance.now() - loading) / 1000;
  const indexMb = heapMb() - heapBefore;
  console.log(
    `tenant index loaded from the read model: ${fmt(store1M.size)} tuples in ${fmt(loadSeconds, 1)} s, ` +
      `heap +${fmt(indexMb)} MB (${fmt((indexMb * 1e6) / store1M.size)} bytes/tuple), process RSS ${fmt(process.memoryUsage().rss / 1e6)} MB`,
  );

  const samples = {
    'random user x random document (mostly denied)': Array.from({ length: 20_000 }, () => viewerCheck(`u${pick(USERS)}`, `d${pick(DOCUMENTS)}`)),
    'inherited: 2 nested groups, 3 folder levels (allowed)': Array.from({ length: 20_000 }, () => viewerCheck('alice', aliceDocument())),
  };
  const check = async (request: CheckRequest) => service.fga.authorization.check(TENANT, request);
  await timed(2_000, 1, (i) => check(samples['random user x random document (mostly denied)'][i]!)); // warm-up
  for (const [label, requests] of Object.entries(samples)) {
    const result = await timed(requests.length, 1, (i) => check(requests[i]!));
    console.log(`in-process check, ${label}: ${fmt(result.perSecond)}/s, p50 ${fmt(result.p50, 3)} ms, p99 ${fmt(result.p99, 3)} ms`);
  }

  await service.app.listen({ host: '127.0.0.1', port: 0 });
  const address = service.app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const headers = { 'x-tenant': TENANT, authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  for (const [label, requests] of Object.entries(samples)) {
    const bodies = requests.slice(0, 2_000).map((request) => JSON.stringify(request));
    const result = await httpLoad({ url: `http://127.0.0.1:${port}/api/fga/check`, headers, bodies, concurrency: 32, requests: 20_000 });
    console.log(
      `HTTP POST /api/fga/check (32 connections), ${label}: ${fmt(result.perSecond)}/s, p50 ${fmt(result.p50, 2)} ms, p99 ${fmt(result.p99, 2)} ms` +
        (result.failures ? `, ${result.failures} failures` : ''),
    );
  }

  const listRequest = { objectType: 'document', relation: 'viewer', subjectType: 'user', subjectId: 'alice' };
  let listed = 0;
  const inProcessList = await timed(30, 1, async () => {
    listed = (await service.fga.authorization.listObjects(TENANT, listRequest)).total;
  });
  const httpList = await timed(30, 1, () => inject('POST', '/api/fga/list-objects', listRequest, token));
  console.log(`list-objects document#viewer for alice (${fmt(listed)} ids): in-process p50 ${fmt(inProcessList.p50, 1)} ms, p99 ${fmt(inProcessList.p99, 1)} ms; HTTP p50 ${fmt(httpList.p50, 1)} ms, p99 ${fmt(httpList.p99, 1)} ms`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
