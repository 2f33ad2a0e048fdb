/**
 * A lean HTTP/1.1 load generator in a process of its own (so it shares neither the server's event
 * loop nor its CPU counters): `concurrency` keep-alive TCP connections, each writing its next
 * request (pre-serialized bytes: request line, headers, body) as soon as the previous answer is
 * complete. Answers are framed by a minimal parser (status line, content-length or chunked); only
 * a chain reads the body. No http.Agent, ClientRequest or IncomingMessage, so the generator's own
 * CPU per request (reported) stays a small fraction of the server's. Started by `httpLoad` below.
 */
import { execFileSync, fork } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { percentile } from './support.ts';

const WORKER_FLAG = 'IAM_BENCH_LOAD_WORKER';

export interface LoadPlan {
  /** http://host:port/path?query (plain HTTP only). */
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
  /**
   * Requests a second, all connections together: request i is written no earlier than i / rate
   * seconds after the first (a connection whose next request is not due yet waits for it). Unset:
   * each connection writes its next request as soon as its answer is complete.
   */
  rate?: number;
}

export interface LoadResult {
  perSecond: number;
  p50: number;
  p99: number;
  /** Answers other than 200. */
  failures: number;
  /** The generator's own CPU (user + system, every thread of its process) per request, in µs. */
  generatorUs: number;
}

/** The bytes of one request: request line, headers, body. */
function serialize(plan: LoadPlan, target: URL, body: string | null): Buffer {
  const head = [`${plan.method ?? 'POST'} ${target.pathname}${target.search} HTTP/1.1`, `host: ${target.host}`];
  for (const [name, value] of Object.entries(plan.headers)) head.push(`${name}: ${value}`);
  if (body !== null) head.push(`content-length: ${Buffer.byteLength(body)}`);
  return Buffer.from(`${head.join('\r\n')}\r\n\r\n${body ?? ''}`);
}

const CRLF_CRLF = Buffer.from('\r\n\r\n');

/**
 * Frames the answers of one keep-alive connection: calls `answered(status, body)` per complete
 * answer (body only when `keepBody`, else empty). Handles content-length and chunked bodies.
 */
class ResponseFramer {
  private pending: Buffer | null = null;
  private status = 0;
  /** Body bytes still expected (content-length), or -1 while reading headers, -2 for chunked. */
  private remaining = -1;
  private body: Buffer[] = [];

  constructor(
    private readonly keepBody: boolean,
    private readonly answered: (status: number, body: string) => void,
  ) {}

  push(chunk: Buffer): void {
    const data = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
    this.pending = null;
    let at = 0;
    while (at < data.length) {
      if (this.remaining === -1) {
        const end = data.indexOf(CRLF_CRLF, at);
        if (end < 0) break;
        this.remaining = this.readHead(data.toString('latin1', at, end));
        at = end + 4;
        if (this.remaining === 0) this.finish();
      } else if (this.remaining === -2) {
        const lineEnd = data.indexOf('\r\n', at);
        if (lineEnd < 0) break;
        const size = Number.parseInt(data.toString('latin1', at, lineEnd), 16);
        // A chunk with its trailing CRLF, or the last chunk (size 0) with the empty trailer line.
        const needed = lineEnd + 2 + size + 2;
        if (data.length < needed) break;
        if (size === 0) {
          at = needed;
          this.finish();
        } else {
          if (this.keepBody) this.body.push(Buffer.from(data.subarray(lineEnd + 2, lineEnd + 2 + size)));
          at = needed;
        }
      } else {
        const take = Math.min(this.remaining, data.length - at);
        if (this.keepBody) this.body.push(Buffer.from(data.subarray(at, at + take)));
        this.remaining -= take;
        at += take;
        if (this.remaining === 0) this.finish();
      }
    }
    // The read buffer is reused for the next read: what is kept is copied.
    if (at < data.length) this.pending = Buffer.from(data.subarray(at));
  }

  /** Takes the status; answers the body's framing (its length, or -2 for chunked). */
  private readHead(head: string): number {
    // "HTTP/1.1 200 OK": the status is the three digits after the first space.
    this.status = Number(head.slice(9, 12));
    const lower = head.toLowerCase();
    const length = lower.indexOf('\r\ncontent-length:');
    // parseInt skips the blank after the colon and stops at the line's end.
    if (length >= 0) return Number.parseInt(lower.slice(length + 17, length + 40), 10);
    return lower.includes('\r\ntransfer-encoding: chunked') ? -2 : 0;
  }

  private finish(): void {
    const body = this.keepBody ? Buffer.concat(this.body).toString() : '';
    this.body = [];
    this.remaining = -1;
    this.answered(this.status, body);
  }
}

/** A connection and where its reads go (a framer, once the load starts). */
interface Connection {
  socket: Socket;
  read: (chunk: Buffer) => void;
}

async function run(plan: LoadPlan, ready: () => Promise<void>): Promise<LoadResult> {
  const target = new URL(plan.url);
  const method = plan.method ?? 'POST';
  const prepared = method === 'GET' ? [serialize(plan, target, null)] : plan.bodies.map((body) => serialize(plan, target, body));
  const latencies = new Float64Array(plan.requests);
  let sent = 0;
  let done = 0;
  let failures = 0;
  const connections: Connection[] = await Promise.all(
    Array.from(
      { length: Math.min(plan.concurrency, plan.requests) },
      () =>
        new Promise<Connection>((resolve, reject) => {
          const connection: Connection = { socket: null as unknown as Socket, read: () => {} };
          // onread hands each read to the callback in a buffer of the connection's own, without the
          // stream machinery (no Readable push, no 'data' event).
          const onread = {
            buffer: Buffer.allocUnsafe(65_536),
            callback: (length: number, buffer: Uint8Array) => {
              connection.read((buffer as Buffer).subarray(0, length));
              return true;
            },
          };
          connection.socket = connect(
            { host: target.hostname, port: Number(target.port || 80), noDelay: true, onread },
            () => resolve(connection),
          );
          connection.socket.once('error', reject);
        }),
    ),
  );
  await ready();
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  await Promise.all(
    connections.map(
      ({ socket }, connection) =>
        new Promise<void>((resolve, reject) => {
          let chained = plan.chain ? (JSON.parse(plan.bodies[connection]!) as Record<string, unknown>) : null;
          let slot = -1;
          let sentAt = 0;
          let waiting = false;
          const next = () => {
            if (sent >= plan.requests) {
              socket.end();
              resolve();
              return;
            }
            const due = plan.rate ? started + (sent * 1000) / plan.rate - performance.now() : 0;
            if (due >= 1) {
              setTimeout(next, due);
              return;
            }
            slot = sent++;
            waiting = true;
            sentAt = performance.now();
            socket.write(chained ? serialize(plan, target, JSON.stringify(chained)) : prepared[slot % prepared.length]!);
          };
          const framer = new ResponseFramer(plan.chain !== undefined, (status, body) => {
            latencies[slot] = performance.now() - sentAt;
            waiting = false;
            done += 1;
            if (status !== 200) failures += 1;
            else if (chained && plan.chain) chained = { ...chained, [plan.chain.to]: (JSON.parse(body) as Record<string, unknown>)[plan.chain.from] };
            next();
          });
          connections[connection]!.read = (chunk) => framer.push(chunk);
          socket.once('error', reject);
          socket.once('close', () => (waiting ? reject(new Error('the server closed a connection with a request unanswered')) : resolve()));
          next();
        }),
    ),
  );
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  const sorted = Array.from(latencies.subarray(0, done)).sort((a, b) => a - b);
  return { perSecond: done / seconds, p50: percentile(sorted, 50), p99: percentile(sorted, 99), failures, generatorUs: (cpu.user + cpu.system) / done };
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

/**
 * Runs `plan` in a child process and answers its figures. `onStart` runs once every connection is
 * open, just before the first request is written (start a CPU counter there: the child's start-up
 * and connecting are not part of the load).
 */
export function httpLoad(plan: LoadPlan, onStart?: () => void): Promise<LoadResult> {
  const child = fork(fileURLToPath(import.meta.url), [], { execArgv: ['--import', 'tsx'], env: { ...process.env, [WORKER_FLAG]: '1' } });
  if (plan.core !== undefined && child.pid) pinToCore(child.pid, plan.core);
  return new Promise((resolve, reject) => {
    child.on('message', (message: { ready?: true; result?: LoadResult; error?: string }) => {
      if (message.ready) {
        onStart?.();
        child.send({ go: true });
      } else if (message.result) resolve(message.result);
      else reject(new Error(`load generator: ${message.error}`));
    });
    child.once('error', reject);
    child.once('exit', (code) => code !== 0 && reject(new Error(`load generator exited with ${code}`)));
    child.send(plan);
  });
}

if (process.env[WORKER_FLAG] && process.send) {
  process.once('message', (plan) => {
    const ready = () =>
      new Promise<void>((go) => {
        process.once('message', () => go());
        process.send!({ ready: true });
      });
    run(plan as LoadPlan, ready).then(
      (result) => process.send!({ result }, () => process.exit(0)),
      (error: unknown) => process.send!({ error: String(error) }, () => process.exit(1)),
    );
  });
}
