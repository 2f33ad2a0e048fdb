/**
 * A load generator in a process of its own (so it does not share the server's event loop): POSTs
 * the given JSON bodies round-robin with `concurrency` keep-alive connections and reports
 * requests/second and latency percentiles to its parent. Started by `httpLoad` below.
 */
import { fork } from 'node:child_process';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { percentile } from './support.ts';

const WORKER_FLAG = 'IAM_BENCH_LOAD_WORKER';

export interface LoadPlan {
  url: string;
  headers: Record<string, string>;
  bodies: string[];
  concurrency: number;
  requests: number;
}

export interface LoadResult {
  perSecond: number;
  p50: number;
  p99: number;
  failures: number;
}

function post(agent: http.Agent, plan: LoadPlan, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = http.request(plan.url, { method: 'POST', agent, headers: { ...plan.headers, 'content-length': Buffer.byteLength(body) } }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
    });
    request.on('error', reject);
    request.end(body);
  });
}

async function run(plan: LoadPlan): Promise<LoadResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: plan.concurrency });
  const latencies: number[] = [];
  let next = 0;
  let failures = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: plan.concurrency }, async () => {
      while (next < plan.requests) {
        const body = plan.bodies[next++ % plan.bodies.length]!;
        const t0 = performance.now();
        if ((await post(agent, plan, body)) !== 200) failures += 1;
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  return { perSecond: plan.requests / seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99), failures };
}

/** Runs `plan` in a child process and answers its figures. */
export function httpLoad(plan: LoadPlan): Promise<LoadResult> {
  const child = fork(fileURLToPath(import.meta.url), [], { execArgv: ['--import', 'tsx'], env: { ...process.env, [WORKER_FLAG]: '1' } });
  return new Promise((resolve, reject) => {
    child.once('message', (result) => resolve(result as LoadResult));
    child.once('error', reject);
    child.once('exit', (code) => code !== 0 && reject(new Error(`load generator exited with ${code}`)));
    child.send(plan);
  });
}

if (process.env[WORKER_FLAG] && process.send) {
  process.once('message', (plan) => {
    void run(plan as LoadPlan).then((result) => process.send!(result, () => process.exit(0)));
  });
}
