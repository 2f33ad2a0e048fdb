/**
 * A load generator in a process of its own (so it does not share the server's event loop): GETs,
 * or POSTs the given JSON bodies round-robin, with `concurrency` keep-alive connections and
 * reports requests/second and latency percentiles to its parent. Started by `httpLoad` below.
 */
import { execFileSync, fork } from 'node:child_process';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { percentile } from './support.ts';

const WORKER_FLAG = 'IAM_BENCH_LOAD_WORKER';

export interface LoadPlan {
  url: string;
  method?: 'GET' | 'POST';
  headers: Record<string, string>;
  /** POST bodies, round-robin; with `chain`, body i starts connection i. */
  bodies: string[];
  concurrency: number;
  requests: number;
  /** Each connection copies the answer's field `from` into field `to` of its next body (token rotation). */
  chain?: { from: string; to: string };
  /** The CPU core the generator runs on (taskset), apart from the server's. */
  core?: number;
}

export interface LoadResult {
  perSecond: number;
  p50: number;
  p99: number;
  failures: number;
}

function send(agent: http.Agent, plan: LoadPlan, body: string | null): Promise<{ status: number; text: string }> {
  const headers = body === null ? plan.headers : { ...plan.headers, 'content-length': Buffer.byteLength(body) };
  return new Promise((resolve, reject) => {
    const request = http.request(plan.url, { method: plan.method ?? 'POST', agent, headers }, (response) => {
      const chunks: Buffer[] = [];
      // Only a chain needs the answer; everything else is drained unread.
      if (plan.chain) response.on('data', (chunk: Buffer) => chunks.push(chunk));
      else response.resume();
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
    });
    request.on('error', reject);
    request.end(body ?? undefined);
  });
}

async function run(plan: LoadPlan): Promise<LoadResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: plan.concurrency });
  const latencies: number[] = [];
  let next = 0;
  let failures = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: plan.concurrency }, async (_, connection) => {
      let chained = plan.chain ? (JSON.parse(plan.bodies[connection]!) as Record<string, unknown>) : null;
      while (next < plan.requests) {
        const body = plan.method === 'GET' ? null : chained ? JSON.stringify(chained) : plan.bodies[next % plan.bodies.length]!;
        next += 1;
        const t0 = performance.now();
        const { status, text } = await send(agent, plan, body);
        latencies.push(performance.now() - t0);
        if (status !== 200) failures += 1;
        else if (chained && plan.chain) chained = { ...chained, [plan.chain.to]: (JSON.parse(text) as Record<string, unknown>)[plan.chain.from] };
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  return { perSecond: plan.requests / seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99), failures };
}

/** Pins a process and all its threads to one CPU core (or a taskset list such as `0-1`); false when taskset is missing or refuses. */
export function pinToCore(pid: number, core: number | string): boolean {
  try {
    execFileSync('taskset', ['-a', '-p', '-c', String(core), String(pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Runs `plan` in a child process and answers its figures. */
export function httpLoad(plan: LoadPlan): Promise<LoadResult> {
  const child = fork(fileURLToPath(import.meta.url), [], { execArgv: ['--import', 'tsx'], env: { ...process.env, [WORKER_FLAG]: '1' } });
  if (plan.core !== undefined && child.pid) pinToCore(child.pid, plan.core);
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
