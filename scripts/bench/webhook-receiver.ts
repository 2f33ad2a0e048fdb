/**
 * The webhooks benchmark's receiver, in a child process of its own so the benchmark's figures show
 * the service's cost apart from the receiver's: the tests' HTTPS receiver answering 204, noting
 * per arrival only the event id, the subscription (the URL) and the latency from the event's
 * timestamp. The parent drives it over IPC (down, up, report).
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startHttpsReceiver } from '../../test/support/https-receiver.ts';

const CHILD_FLAG = 'IAM_BENCH_WEBHOOK_RECEIVER';
const PROGRESS_MS = 50;

export interface ReceiverReport {
  /** Event-to-arrival latencies (ms) of every arrival. */
  latencies: number[];
  /** Distinct (event, subscription) pairs that arrived, and how many of them arrived more than once. */
  distinct: number;
  duplicated: number;
  /** TLS connections the receiver accepted, and how many of them resumed a session. */
  connections: { accepted: number; resumed: number };
  cpuMs: number;
}

type Command = { do: 'down' | 'up' | 'report' | 'stop' };
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
  const ask = (command: Command['do']) => {
    const answer = next(command);
    child.send({ do: command } satisfies Command);
    return answer;
  };
  const { ready } = (await next('ready')) as Extract<Message, { ready: unknown }>;
  return {
    ...ready,
    arrived: () => arrived,
    goDown: async () => void (await ask('down')),
    comeUp: async () => void (await ask('up')),
    report: async () => ((await ask('report')) as Extract<Message, { report: unknown }>).report,
    close: async () => {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.send({ do: 'stop' } satisfies Command);
      await exited;
    },
  };
}

export type ReceiverProcess = Awaited<ReturnType<typeof startReceiverProcess>>;

async function runReceiver(): Promise<void> {
  const receiver = await startHttpsReceiver({ record: false });
  const send = (message: Message) => process.send!(message);
  const latencies: number[] = [];
  const arrivals = new Map<string, number>();
  receiver.answer(({ url, body }) => {
    // The body starts {"id":"<uuid>","type":...,"timestamp":"<ISO>": read just those two fields.
    const at = body.indexOf('"timestamp":"') + 13;
    latencies.push(Date.now() - Date.parse(body.slice(at, body.indexOf('"', at))));
    const key = `${body.slice(7, 43)} ${url}`;
    arrivals.set(key, (arrivals.get(key) ?? 0) + 1);
    return { status: 204 };
  });
  const cpuAtStart = process.cpuUsage();
  const progress = setInterval(() => send({ arrived: latencies.length }), PROGRESS_MS);
  process.on('message', async ({ do: command }: Command) => {
    if (command === 'down') await receiver.goDown();
    if (command === 'up') await receiver.comeUp();
    if (command === 'report') {
      const cpu = process.cpuUsage(cpuAtStart);
      const counts = [...arrivals.values()];
      const duplicated = counts.filter((n) => n > 1).length;
      send({ report: { latencies, distinct: arrivals.size, duplicated, connections: receiver.connections, cpuMs: (cpu.user + cpu.system) / 1000 } });
      return;
    }
    if (command === 'stop') {
      clearInterval(progress);
      await receiver.close();
      process.disconnect();
      return;
    }
    send({ done: command });
  });
  send({ ready: { url: receiver.url, caFile: receiver.caFile } });
}

if (process.env[CHILD_FLAG] && process.send) await runReceiver();
