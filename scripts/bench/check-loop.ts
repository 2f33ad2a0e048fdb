/**
 * Micro loop of POST /api/fga/check in-process (fastify inject, no socket, no load generator): the
 * server's CPU per check, steadier than an HTTP rate on a shared machine, and with `--cpu-profile DIR`
 * the profile of the loop alone; `--without-audit` turns the PERMISSION_CHECK audit off (what it costs),
 * `--without-check-answers` keeps no check answers (its questions repeat: else it measures kept answers).
 * Beside the CPU, the young-generation collections (scavenges) per 1,000 requests: they follow the
 * bytes a request allocates, and unlike CPU time a busy machine does not move them.
 * Last, the promises made per request (an async_hooks count, in a pass of its own since the hook
 * slows everything): a count, like the scavenges, that the load does not move.
 * Usage: npx tsx scripts/bench/check-loop.ts [--checks 20000] [--cpu-profile DIR] [--without-audit] [--without-check-answers]
 */
import { createHook } from 'node:async_hooks';
import { PerformanceObserver, constants } from 'node:perf_hooks';
import { cpuProfiler } from './cpu-profile.ts';
import { activateDriveModel, aliceDocument, aliceTuples, appendTuples, viewerCheck } from './drive-dataset.ts';
import { BENCH_ADMIN, benchService } from './service.ts';
import { checkBenchSettings, fmt, nodeCpu, numberOption, textOption } from './support.ts';

const CHECKS = numberOption('checks', 20_000);
const PROFILE_DIR = textOption('cpu-profile');
const CONCURRENCY = 32;
const TENANT = 'platform';

let scavenges = 0;
let promises = 0;
const promiseCount = createHook({
  init(_id, type) {
    if (type === 'PROMISE') promises += 1;
  },
});
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) if ((entry as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR) scavenges += 1;
}).observe({ entryTypes: ['gc'] });

const bench = await benchService(checkBenchSettings());
try {
  const { service, store, inject } = bench;
  const admin = (await inject('POST', '/api/auth/login', BENCH_ADMIN)).data.accessToken as string;
  const modelId = await activateDriveModel(inject, admin);
  const tuples: string[] = [];
  aliceTuples((text) => tuples.push(text));
  await service.runner.waitFor(await appendTuples(store, TENANT, modelId, tuples), 60_000, ['fga-history']);
  const bodies = Array.from({ length: 2_000 }, () => JSON.stringify(viewerCheck('alice', aliceDocument())));
  const headers = { 'x-tenant': TENANT, 'content-type': 'application/json', authorization: `Bearer ${admin}`, 'user-agent': 'check-loop' };
  /** Server CPU (µs) and scavenges per 1,000 of `count` requests, `CONCURRENCY` at a time, their read models caught up. */
  const round = async (count: number, check: boolean) => {
    let next = 0;
    let unexpected = 0;
    const [before, scavengesBefore] = [nodeCpu(), scavenges];
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < count) {
          const payload = bodies[next++ % bodies.length]!;
          const response = check
            ? await service.app.inject({ method: 'POST', url: '/api/fga/check', headers, payload })
            : await service.app.inject({ method: 'GET', url: '/health/live', headers: { 'user-agent': 'check-loop' } });
          if (response.statusCode !== 200 || (check && !response.body.includes('"allowed":true'))) unexpected += 1;
        }
      }),
    );
    if (unexpected) throw new Error(`${unexpected} answers were not 200 (allowed)`);
    await service.runner.waitFor(await store.headPosition(), 60_000);
    return { us: ((nodeCpu() - before) * 1e6) / count, scavenges: ((scavenges - scavengesBefore) * 1000) / count };
  };
  await round(CHECKS / 4, true); // warm-up: compiled schemas, JIT
  await round(CHECKS / 4, false);
  const beyond: number[] = [];
  for (let r = 0; r < 3; r += 1) {
    const floor = await round(CHECKS, false);
    const profile = r === 2 && PROFILE_DIR ? await cpuProfiler() : null;
    const check = await round(CHECKS, true);
    if (profile && PROFILE_DIR) console.log(`CPU profile: ${await profile.stop(PROFILE_DIR, 'check-loop')}`);
    beyond.push(check.us - floor.us);
    console.log(
      `round ${r + 1}: server CPU a check ${fmt(check.us, 1)} µs, a GET /health/live ${fmt(floor.us, 1)} µs (in-process inject, ${CONCURRENCY} at a time); ` +
        `scavenges per 1,000: checks ${fmt(check.scavenges, 2)}, GET /health/live ${fmt(floor.scavenges, 2)}`,
    );
  }
  console.log(`the check beyond /health/live: ${beyond.map((us) => fmt(us, 1)).join(' / ')} µs (median ${fmt(beyond.sort((a, b) => a - b)[1]!, 1)})`);
  const promisesPer = async (check: boolean) => {
    const before = promises;
    promiseCount.enable();
    await round(2_000, check);
    promiseCount.disable();
    return (promises - before) / 2_000;
  };
  const [floorPromises, checkPromises] = [await promisesPer(false), await promisesPer(true)];
  console.log(`promises per request (the loop's own inject included): checks ${fmt(checkPromises, 1)}, GET /health/live ${fmt(floorPromises, 1)}`);
} finally {
  await bench.close();
}
