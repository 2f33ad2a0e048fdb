/**
 * The webhooks benchmark's receiver, in a child process of its own so the benchmark's figures show
 * the service's cost apart from the receiver's: a TLS server reading HTTP/1.1 requests itself
 * (readRequests) and answering 204, noting per arrival only the event id, the subscription (the
 * URL) and the latency from the event's timestamp, and checking the signature of one arrival in 100
 * with the subscription's secret. The parent drives it over IPC (secrets, down, up, report).
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServer, type TLSSocket } from 'node:tls';
import { receiverCertificate } from '../../test/support/https-receiver.ts';

const CHILD_FLAG = 'IAM_BENCH_WEBHOOK_RECEIVER';
const PROGRESS_MS = 50;
/** One arrival in this many has its signature checked. */
const SIGNATURE_SAMPLE = 100;

export interface ReceiverReport {
  /** Event-to-arrival latencies (ms) of every arrival. */
  latencies: number[];
  /** Distinct (event, subscription) pairs that arrived, and how many of them arrived more than once. */
  distinct: number;
  duplicated: number;
  /** TLS connections the receiver accepted, and how many of them resumed a session. */
  connections: { accepted: number; resumed: number };
  /** Arrivals whose signature was checked (a sample), and how many of them verified. */
  signatures: { checked: number; valid: number };
  cpuMs: number;
}

type Command = { do: 'down' | 'up' | 'report' | 'stop' } | { do: 'secrets'; secrets: string[] };
type Message = { ready: { url: string; caFile: string } } | { arrived: number } | { done: Command['do'] } | { report: ReceiverReport };

/** Starts the receiver process; `arrived()` is its count of arrivals, refreshed every 50 ms. */
export async function startReceiverProcess() {
  const child = fork(fileURLToPath(import.meta.url), [], { execArgv: ['--import', 'tsx'], env: { ...process.env, [CHILD_FLAG]: '1' } });
  let arrived = 0;
  const waiting = new Map<string, (message: Message) => void>();
  child.on('message', (message: Message) => {
    if ('arrived' in message) arrived = message.arrived;
    else waiting.get('ready' in message ? 'ready' : 'done' in message ? message.done : 'report')?.(message);
  });
  const next = (key: string) =>
    new Promise<Message>((resolve, reject) => {
      waiting.set(key, resolve);
      child.once('exit', (code) => reject(new Error(`the receiver process exited with ${code}`)));
    });
  const ask = (command: Command) => {
    const answer = next(command.do);
    child.send(command);
    return answer;
  };
  const { ready } = (await next('ready')) as Extract<Message, { ready: unknown }>;
  return {
    ...ready,
    arrived: () => arrived,
    /** The signing secret of each subscription, by its index (the `subscription` query parameter). */
    knowSecrets: async (secrets: string[]) => void (await ask({ do: 'secrets', secrets })),
    goDown: async () => void (await ask({ do: 'down' })),
    comeUp: async () => void (await ask({ do: 'up' })),
    report: async () => ((await ask({ do: 'report' })) as Extract<Message, { report: unknown }>).report,
    close: async () => {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.send({ do: 'stop' } satisfies Command);
      await exited;
    },
  };
}

export type ReceiverProcess = Awaited<ReturnType<typeof startReceiverProcess>>;

/** What the receiver reads of one request: its target (path and query), its headers (names lower-cased), its body. */
interface ParsedRequest {
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

const HEAD_END = Buffer.from('\r\n\r\n');
const NO_CONTENT = Buffer.from('HTTP/1.1 204 No Content\r\n\r\n', 'latin1');
const BAD_REQUEST = Buffer.from('HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n', 'latin1');

/**
 * HTTP/1.1 requests off one keep-alive connection, each with a content-length body (what the
 * service sends): the request line and every header parsed, the body read whole, then `answer`.
 * Returns false for a request it cannot read (no length, chunked, malformed): the connection is
 * then answered 400 and closed. Lighter than node:http (no IncomingMessage or ServerResponse
 * streams per request), so the figures show less of the receiver and more of the service.
 */
function readRequests(socket: TLSSocket, answer: (request: ParsedRequest) => void): void {
  let pending: Buffer = Buffer.alloc(0);
  const refuse = () => {
    socket.removeAllListeners('data');
    socket.end(BAD_REQUEST);
  };
  socket.on('data', (chunk: Buffer) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    // The answers to the requests of one read (pipelined) go out in one write.
    socket.cork();
    try {
      readPending();
    } finally {
      socket.uncork();
    }
  });
  const readPending = () => {
    for (;;) {
      const headEnd = pending.indexOf(HEAD_END);
      if (headEnd < 0) return;
      const [requestLine = '', ...lines] = pending.toString('latin1', 0, headEnd).split('\r\n');
      const [method, url, version] = requestLine.split(' ');
      const headers: IncomingHttpHeaders = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        if (colon <= 0) return refuse();
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      const length = Number(headers['content-length']);
      if (method !== 'POST' || !url || version !== 'HTTP/1.1' || headers['transfer-encoding'] || !Number.isInteger(length) || length < 0) return refuse();
      const bodyStart = headEnd + HEAD_END.length;
      if (pending.length < bodyStart + length) return;
      const body = pending.toString('utf8', bodyStart, bodyStart + length);
      pending = pending.subarray(bodyStart + length);
      answer({ url, headers, body });
      if (headers.connection === 'close') return void socket.end();
    }
  };
  socket.on('error', () => socket.destroy());
}

async function runReceiver(): Promise<void> {
  const { cert, key, caFile } = await receiverCertificate();
  const send = (message: Message) => process.send!(message);
  const latencies: number[] = [];
  const arrivals = new Map<string, number>();
  const connections = { accepted: 0, resumed: 0 };
  const signatures = { checked: 0, valid: 0 };
  let secrets: string[] = [];
  const sockets = new Set<TLSSocket>();
  // As little per request as a receiver can do: the request parsed, two body fields sliced out, 204.
  const server = createServer({ cert, key }, (socket) => {
    connections.accepted += 1;
    if (socket.isSessionReused()) connections.resumed += 1;
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    readRequests(socket, ({ url, headers, body }) => {
      // The body starts {"id":"<uuid>","type":...,"timestamp":"<ISO>": read just those two fields.
      const at = body.indexOf('"timestamp":"') + 13;
      latencies.push(Date.now() - Date.parse(body.slice(at, body.indexOf('"', at))));
      const arrival = `${body.slice(7, 43)} ${url}`;
      arrivals.set(arrival, (arrivals.get(arrival) ?? 0) + 1);
      if (latencies.length % SIGNATURE_SAMPLE === 0) {
        signatures.checked += 1;
        const secret = secrets[Number(url.slice(url.indexOf('subscription=') + 13))];
        if (secret && verifies(secret, headers, body)) signatures.valid += 1;
      }
      socket.write(NO_CONTENT);
    });
  });
  const dropConnections = () => {
    for (const socket of sockets) socket.destroy();
  };
  let port = 0;
  const listen = () => new Promise<void>((resolve) => server.listen(port, '127.0.0.1', () => resolve()));
  await listen();
  port = (server.address() as AddressInfo).port;

  const cpuAtStart = process.cpuUsage();
  const progress = setInterval(() => send({ arrived: latencies.length }), PROGRESS_MS);
  process.on('message', async (command: Command) => {
    if (command.do === 'secrets') secrets = command.secrets;
    if (command.do === 'down') {
      const closed = new Promise((resolve) => server.close(resolve));
      dropConnections();
      await closed;
    }
    if (command.do === 'up') await listen();
    if (command.do === 'report') {
      const cpu = process.cpuUsage(cpuAtStart);
      const counts = [...arrivals.values()];
      const duplicated = counts.filter((n) => n > 1).length;
      send({ report: { latencies, distinct: arrivals.size, duplicated, connections, signatures, cpuMs: (cpu.user + cpu.system) / 1000 } });
      return;
    }
    if (command.do === 'stop') {
      clearInterval(progress);
      dropConnections();
      server.close();
      process.disconnect();
      return;
    }
    send({ done: command.do });
  });
  send({ ready: { url: `https://localhost:${port}/hook`, caFile } });
}

/** The spec's check: HMAC-SHA256 of `<timestamp>.<body>` keyed with the whole secret, one of the signatures offered, timestamp within 300 s. */
function verifies(secret: string, headers: IncomingHttpHeaders, body: string): boolean {
  const timestamp = String(headers['x-webhook-timestamp']);
  const expected = createHmac('sha256', secret).update(`${timestamp}.${body}`).digest();
  const fresh = Math.abs(Date.now() / 1000 - Number(timestamp)) <= 300;
  return fresh && String(headers['x-webhook-signature']).split(',').some((hex) => hex.length === 64 && timingSafeEqual(Buffer.from(hex, 'hex'), expected));
}

if (process.env[CHILD_FLAG] && process.send) await runReceiver();
