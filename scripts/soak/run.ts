/**
 * Soak and fault run (npm run soak -- --minutes 10): the service as a real process on an embedded
 * PostgreSQL in a temporary DATA_DIR, bounded mixed load over loopback HTTP, and three faults at
 * set times: a service restart (SIGTERM, start again on the same DATA_DIR), kill -9 of the
 * embedded postmaster, and a restart of the Kafka broker. Prints its figures and exits non-zero
 * when a criterion fails (scripts/soak/README.md). Not part of the test suite.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { jsonClient, type JsonClient } from './http.ts';
import { newLedger, PASSWORD, runWorker, TENANT, verifyLedger } from './load.ts';
import { report, type FaultWindow, type RssSample } from './report.ts';
import { rssKiB, ServiceProcess, treeRssKiB } from './service-process.ts';
import { freePort } from '../../test/support/free-port.ts';

const { values: args } = parseArgs({
  options: {
    minutes: { type: 'string', default: '10' },
    workers: { type: 'string', default: '4' },
    'pause-ms': { type: 'string', default: '20' },
    'p99-ms': { type: 'string', default: '2500' },
    'kafka-port': { type: 'string', default: '19192' },
    'no-kafka': { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
  },
});
const runMs = Number(args.minutes) * 60_000;
const ADMIN = { email: 'root@soak.test', password: PASSWORD };
/** After a fault the service is ready again; requests already under way may still see it. */
const GRACE_MS = 2000;
const READY_TIMEOUT_MS = 180_000;
const run = promisify(execFile);
const KAFKA_SCRIPTS = fileURLToPath(new URL('../kafka', import.meta.url));

/** A broker of the run's own (not the shared 9092 one, which other work may be using while we restart ours). */
function kafkaBroker(port: number, dataDir: string) {
  const env = { ...process.env, KAFKA_PORT: String(port), KAFKA_CONTROLLER_PORT: String(port + 1), KAFKA_DATA_DIR: path.join(dataDir, 'kafka') };
  return {
    brokers: `127.0.0.1:${port}`,
    start: () => run('bash', [path.join(KAFKA_SCRIPTS, 'start.sh')], { env }),
    stop: () => run('bash', [path.join(KAFKA_SCRIPTS, 'stop.sh')], { env }),
  };
}

async function expectStatus(answer: Promise<{ status: number; body: any }>, status: number, what: string) {
  const { status: got, body } = await answer;
  if (got !== status) throw new Error(`${what}: ${got} ${JSON.stringify(body)}`);
  return body;
}

/** A platform admin creates tenant acme with an admin, who creates one admin account per worker and an active FGA model. */
async function prepareTenant(client: JsonClient, workers: number): Promise<void> {
  const platform = await expectStatus(client.send('POST', '/api/auth/login', ADMIN, { 'x-tenant': 'platform' }), 200, 'platform login');
  const asPlatform = { 'x-tenant': 'platform', authorization: `Bearer ${platform.data.accessToken}` };
  await expectStatus(client.send('POST', '/api/tenants', { name: TENANT, adminEmail: ADMIN.email, adminPassword: PASSWORD }, asPlatform), 201, 'tenant');
  const headers = { 'x-tenant': TENANT, authorization: `Bearer ${await tenantAdminToken(client)}` };
  for (let id = 0; id < workers; id += 1) {
    await expectStatus(client.send('POST', '/api/users', { email: `worker-${id}@soak.test`, password: PASSWORD, roles: ['admin'] }, headers), 201, 'worker account');
  }
  const dsl = 'model\n  schema 1.1\ntype user\ntype document\n  relations\n    define viewer: [user]';
  const model = await expectStatus(client.send('POST', '/api/fga/models', { name: 'soak', dsl }, headers), 201, 'model');
  await expectStatus(client.send('POST', `/api/fga/models/${model.data.id}/activate`, undefined, headers), 200, 'activation');
}

async function tenantAdminToken(client: JsonClient): Promise<string> {
  const login = await expectStatus(client.send('POST', '/api/auth/login', ADMIN, { 'x-tenant': TENANT }), 200, 'tenant admin login');
  return login.data.accessToken;
}

/** Polls readiness every 100 ms until `until` says stop; answers the distinct statuses seen in order. */
async function watchReadiness(client: JsonClient, until: (status: number, seen: number[]) => boolean, timeoutMs: number): Promise<number[]> {
  const seen: number[] = [];
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const { status } = await client.send('GET', '/health/ready');
    if (seen.at(-1) !== status) seen.push(status);
    if (until(status, seen)) return seen;
    await sleep(100);
  }
  throw new Error(`readiness did not settle within ${timeoutMs} ms (statuses seen: ${seen.join(' -> ')})`);
}

/** The service's V8 heap in use (its Prometheus default metrics), NaN when it does not answer. */
async function heapUsedBytes(client: JsonClient): Promise<number> {
  const { body } = await client.send('GET', '/metrics');
  return Number(typeof body === 'string' ? /^iam_nodejs_heap_size_used_bytes (\S+)$/m.exec(body)?.[1] : Number.NaN);
}

async function relayCaughtUp(client: JsonClient, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const { body } = await client.send('GET', '/metrics');
    if (typeof body === 'string' && /^iam_relay_lag_events\{[^}]*\} 0$/m.test(body)) return true;
    await sleep(500);
  }
  return false;
}

async function main(): Promise<number> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'iam-soak-'));
  const port = await freePort();
  const kafka = args['no-kafka'] ? null : kafkaBroker(Number(args['kafka-port']), dataDir);
  if (kafka) await kafka.start();
  const service = new ServiceProcess(dataDir, {
    PORT: String(port),
    HOST: '127.0.0.1',
    EMBEDDED_POSTGRES_PORT: String(await freePort()),
    IAM_BOOTSTRAP_TENANT: 'platform',
    IAM_BOOTSTRAP_ADMIN_EMAIL: ADMIN.email,
    IAM_BOOTSTRAP_ADMIN_PASSWORD: ADMIN.password,
    // One client address sends everything: the per-address limits would turn the load away.
    RATE_LIMIT_ENABLED: 'false',
    LOG_LEVEL: 'warn',
    ...(kafka ? { KAFKA_BROKERS: kafka.brokers } : {}),
  });
  const workers = Number(args.workers);
  const client = jsonClient(`http://127.0.0.1:${port}`, { sockets: workers + 4, timeoutMs: 30_000 });
  const probe = jsonClient(`http://127.0.0.1:${port}`, { sockets: 2, timeoutMs: 5_000 });
  console.log(`soak: ${args.minutes} min, ${workers} workers, DATA_DIR ${dataDir}, service log ${dataDir}/service.log, kafka ${kafka?.brokers ?? 'off (in-process bus)'}; load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  const extraFailures: string[] = [];
  try {
    service.start();
    await service.waitUntilReady(probe, READY_TIMEOUT_MS);
    await prepareTenant(client, workers);

    const ledger = newLedger();
    const faults: FaultWindow[] = [];
    const rss: RssSample[] = [];
    const startedAt = performance.now();
    const now = () => performance.now() - startedAt;
    const until = Date.now() + runMs;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const pid = service.pid;
        const postmaster = await service.postmasterPid().catch(() => 0);
        if (pid) {
          const heapUsed = await heapUsedBytes(probe);
          rss.push({ at: now(), serviceKiB: await rssKiB(pid), postgresKiB: postmaster ? await treeRssKiB(postmaster) : 0, heapUsedKiB: heapUsed / 1024 });
        }
        await sleep(2000);
      }
    })();
    const load = Promise.all(
      Array.from({ length: workers }, (_, id) =>
        runWorker({ id, client, ledger, startedAt, until, maxRequests: Math.ceil(runMs / Number(args['pause-ms'])), pauseMs: Number(args['pause-ms']) }),
      ),
    );

    const at = (share: number) => sleep(Math.max(0, share * runMs - now()));
    const fault = async (name: FaultWindow['name'], act: (notes: string[]) => Promise<void>) => {
      const window: FaultWindow = { name, start: now(), end: Number.POSITIVE_INFINITY, notes: [] };
      faults.push(window);
      console.log(`[${(window.start / 1000).toFixed(0)} s] ${name}`);
      try {
        await act(window.notes);
      } catch (error) {
        extraFailures.push(`${name}: ${(error as Error).message}`);
      }
      window.end = now() + GRACE_MS;
    };

    await at(0.15);
    await fault('service restart', async (notes) => {
      const code = await service.stop();
      notes.push(`exited with ${code} after ${(now() - faults.at(-1)!.start).toFixed(0)} ms`);
      if (code !== 0) extraFailures.push(`the service exited with ${code} on SIGTERM`);
      service.start();
      await service.waitUntilReady(probe, READY_TIMEOUT_MS);
      notes.push(`ready again after ${(now() - faults.at(-1)!.start).toFixed(0)} ms`);
    });
    await at(0.4);
    await fault('postgres kill -9', async (notes) => {
      process.kill(await service.postmasterPid(), 'SIGKILL');
      const seen = await watchReadiness(probe, (status, statuses) => status === 200 && statuses.includes(503), READY_TIMEOUT_MS);
      notes.push(`readiness ${seen.join(' -> ')}, ready again after ${(now() - faults.at(-1)!.start).toFixed(0)} ms without help`);
    });
    if (kafka) {
      await at(0.65);
      await fault('kafka restart', async (notes) => {
        await kafka.stop();
        notes.push(`broker stopped after ${(now() - faults.at(-1)!.start).toFixed(0)} ms`);
        await sleep(5000);
        await kafka.start();
        notes.push(`started again after ${(now() - faults.at(-1)!.start).toFixed(0)} ms`);
        const caughtUp = await relayCaughtUp(probe, 120_000);
        notes.push(caughtUp ? `relay caught up after ${(now() - faults.at(-1)!.start).toFixed(0)} ms` : 'relay did not catch up');
        if (!caughtUp) extraFailures.push('the relay did not catch up after the Kafka restart');
      });
    }
    await load;
    sampling = false;
    await sampler;

    if ((await probe.send('GET', '/health/ready')).status !== 200) extraFailures.push('not ready at the end');
    if (!(await relayCaughtUp(probe, 60_000))) extraFailures.push('the relay has events left to publish at the end');
    const unverified = await verifyLedger(client, ledger, await tenantAdminToken(client));
    const failures = report({
      ledger,
      faults,
      rss,
      unverified,
      criteria: { p99BoundMs: Number(args['p99-ms']), maxRssGrowth: 0.1, warmedUpAt: 0.3 * runMs, baselineUntil: 0.4 * runMs, runMs },
      extraFailures,
    });
    console.log(`\nload average at the end: ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
    if (failures.length) {
      console.log(`\nFAILED:\n  ${failures.join('\n  ')}`);
      return 1;
    }
    console.log('\nPASSED: every criterion held');
    return 0;
  } finally {
    client.close();
    probe.close();
    await service.close();
    await kafka?.stop().catch(() => undefined);
    if (!args.keep) await rm(dataDir, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(2);
  },
);
