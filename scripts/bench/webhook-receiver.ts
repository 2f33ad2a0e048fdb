/**
 * The webhooks benchmark's receiver, in a child process of its own so the benchmark's figures show
 * the service's cost apart from the receiver's: a TLS server reading HTTP/1.1 requests itself
 * (readRequests) and answering 204, noting per arrival only the event id, the subscription (the
 * URL's query) and the latency from the event's timestamp, every arrival counted for the
 * exactly-once check, and checking the signature of one arrival in 100 with the subscription's
 * secret. It stands in for receivers on other machines, so it reads of each request only what those
 * checks need, as bytes. The parent drives it over IPC (secrets, down, up, report).
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';
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

/** One request as the receiver reads it: its head (request line and headers, latin1) and its body, both still bytes. */
interface RawRequest {
  head: Buffer;
  body: Buffer;
}

const HEAD_END = Buffer.from('\r\n\r\n');
/** How the service frames every request: its length is the last header, written in lower case. */
const CONTENT_LENGTH = Buffer.from('\r\ncontent-length: ', 'latin1');
const POST = Buffer.from('POST ', 'latin1');
const NO_CONTENT = Buffer.from('HTTP/1.1 204 No Content\r\n\r\n', 'latin1');
const BAD_REQUEST = Buffer.from('HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n', 'latin1');
const CR = 13;
const ZERO = 48;

/** The answers to `count` requests of one read, in one buffer (kept per count: pipelined reads repeat the same few counts). */
const answersOf = (() => {
  const made: Buffer[] = [];
  return (count: number) => (made[count] ??= Buffer.concat(Array.from({ length: count }, () => NO_CONTENT)));
})();

/**
 * HTTP/1.1 requests off one keep-alive connection, each with a content-length body, as the service
 * frames them: a POST whose last header is `content-length`. Per request only the head's end and
 * the length are found (no strings made); `answer` gets head and body as bytes and reads what it
 * needs. The answers to the requests of one read go out in one write. A request framed otherwise
 * (no length, not a POST) is answered 400 and the connection closed. Lighter than node:http (no
 * IncomingMessage or ServerResponse streams per request) and than parsing every header, so the
 * figures show less of this stand-in for a receiver on another machine and more of the service.
 */
function readRequests(socket: TLSSocket, answer: (request: RawRequest) => void): void {
  let pending: Buffer = Buffer.alloc(0);
  const refuse = () => {
    socket.removeAllListeners('data');
    socket.end(BAD_REQUEST);
  };
  socket.on('data', (chunk: Buffer) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    let answered = 0;
    for (;;) {
      const headEnd = pending.indexOf(HEAD_END);
      if (headEnd < 0) break;
      const lengthAt = pending.lastIndexOf(CONTENT_LENGTH, headEnd);
      if (lengthAt < 0 || pending.compare(POST, 0, POST.length, 0, POST.length) !== 0) return refuse();
      let length = 0;
      for (let i = lengthAt + CONTENT_LENGTH.length; i < headEnd && pending[i] !== CR; i++) length = length * 10 + pending[i]! - ZERO;
      const bodyStart = headEnd + HEAD_END.length;
      if (pending.length < bodyStart + length) break;
      answer({ head: pending.subarray(0, headEnd), body: pending.subarray(bodyStart, bodyStart + length) });
      answered += 1;
      pending = pending.subarray(bodyStart + length);
    }
    if (answered > 0) socket.write(answersOf(answered));
  });
  socket.on('error', () => socket.destroy());
}

const LINE_END = Buffer.from('\r\n', 'latin1');
const TIMESTAMP_HEADER = Buffer.from('\r\nx-webhook-timestamp: ', 'latin1');
const SIGNATURE_HEADER = Buffer.from('\r\nx-webhook-signature: ', 'latin1');

/** A header's value as the service writes it (name in lower case, one space), or '' when it is not there. */
function headerValue(head: Buffer, name: Buffer): string {
  const at = head.indexOf(name);
  if (at < 0) return '';
  const end = head.indexOf(LINE_END, at + name.length);
  return head.toString('latin1', at + name.length, end < 0 ? head.length : end);
}

const TIMESTAMP_FIELD = Buffer.from('"timestamp":"', 'latin1');
const SUBSCRIPTION = Buffer.from('subscription=', 'latin1');
const SPACE = 32;
/** An ISO timestamp as the service writes it: 2026-01-01T00:00:00.000Z. */
const ISO_LENGTH = 24;

async function runReceiver(): Promise<void> {
  const { cert, key, caFile } = await receiverCertificate();
  const send = (message: Message) => process.send!(message);
  const latencies: number[] = [];
  const arrivals = new Map<string, number>();
  const connections = { accepted: 0, resumed: 0 };
  const signatures = { checked: 0, valid: 0 };
  let keys: KeyObject[] = [];
  const sockets = new Set<TLSSocket>();
  // As little per request as a receiver can do: the request framed, two body fields and the subscription read, 204.
  const server = createServer({ cert, key }, (socket) => {
    connections.accepted += 1;
    if (socket.isSessionReused()) connections.resumed += 1;
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    readRequests(socket, ({ head, body }) => {
      // The body starts {"id":"<uuid>","type":...,"timestamp":"<ISO>": read just those two fields.
      const at = body.indexOf(TIMESTAMP_FIELD) + TIMESTAMP_FIELD.length;
      latencies.push(Date.now() - Date.parse(body.toString('latin1', at, at + ISO_LENGTH)));
      // The request line is `POST /hook?subscription=<n> HTTP/1.1`.
      let subscription = 0;
      for (let i = head.indexOf(SUBSCRIPTION) + SUBSCRIPTION.length; head[i] !== SPACE; i++) subscription = subscription * 10 + head[i]! - ZERO;
      const arrival = `${body.toString('latin1', 7, 43)} ${subscription}`;
      arrivals.set(arrival, (arrivals.get(arrival) ?? 0) + 1);
      if (latencies.length % SIGNATURE_SAMPLE === 0) {
        signatures.checked += 1;
        const key = keys[subscription];
        if (key && verifies(key, headerValue(head, TIMESTAMP_HEADER), headerValue(head, SIGNATURE_HEADER), body)) signatures.valid += 1;
      }
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
    if (command.do === 'secrets') keys = command.secrets.map((secret) => createSecretKey(Buffer.from(secret, 'utf8')));
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

/**
 * The spec's check: HMAC-SHA256 of `<timestamp>.<body>` keyed with the whole secret, one of the
 * signatures offered, timestamp within 300 s (the body's bytes as they came).
 */
function verifies(key: KeyObject, timestamp: string, offered: string, body: Buffer): boolean {
  const expected = createHmac('sha256', key).update(`${timestamp}.`).update(body).digest();
  const fresh = Math.abs(Date.now() / 1000 - Number(timestamp)) <= 300;
  return fresh && offered.split(',').some((hex) => hex.length === 64 && timingSafeEqual(Buffer.from(hex, 'hex'), expected));
}

if (process.env[CHILD_FLAG] && process.send) await runReceiver();
