import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { buildService } from '../../../src/app.ts';
import { loadConfig } from '../../../src/config.ts';
import { openStorage } from '../../../src/infrastructure.ts';
import { systemClock } from '../../../src/platform/clock.ts';
import { createPool } from '../../../src/platform/db/pool.ts';
import { createLogger } from '../../../src/platform/logging.ts';
import { createTestDatabase } from '../../support/database.ts';
import { PLATFORM, requestThrough, startTestService, tokenOf, type TestService } from '../../support/service.ts';
import { freePort } from '../../support/free-port.ts';

const RECOVERY = { timeout: 60_000, interval: 100 };
const MODEL = `model
  schema 1.1
type user
type document
  relations
    define viewer: [user]`;

interface Harness {
  request: TestService['request'];
  token: TestService['token'];
  /** Runs a query on the service's database from outside the service. */
  inspect<T extends pg.QueryResultRow>(sql: string, params?: unknown[]): Promise<T[]>;
}

interface Fault {
  /** Takes the database away; resolves once it is gone. */
  begin(): Promise<void>;
  /** Gives it back (the embedded one comes back by itself). */
  end(): Promise<void>;
}

const viewer = (objectId: string) => ({ objectType: 'document', objectId, relation: 'viewer', subjectType: 'user', subjectId: 'anne' });

/** Polls /health/ready until stopped and keeps every status it answered. */
function watchReadiness(h: Harness) {
  const statuses: number[] = [];
  let watching = true;
  const done = (async () => {
    while (watching) {
      statuses.push((await h.request({ method: 'GET', url: '/health/ready' })).status);
      await sleep(25);
    }
  })();
  return {
    statuses,
    async stop() {
      watching = false;
      await done;
    },
  };
}

/**
 * Writes (a user, an FGA tuple), takes the database away, and expects: not ready (503) while it is
 * gone, ready again without help once it is back, the acknowledged writes readable, new writes
 * and their read models working, and the LISTEN and leader-lock sessions reconnected.
 */
async function expectRecovery(h: Harness, fault: Fault): Promise<void> {
  const platformAdmin = await h.token({ sub: 'platform-admin', tenant: PLATFORM, roles: ['admin'] });
  expect((await h.request({ method: 'POST', url: '/api/tenants', tenant: PLATFORM, token: platformAdmin, body: { name: 'acme' } })).status).toBe(201);
  const token = await h.token({ sub: 'acme-admin', tenant: 'acme', roles: ['admin'] });
  const call = (method: string, url: string, body?: unknown) => h.request({ method, url, body, tenant: 'acme', token });
  const createUser = async (email: string) => {
    const created = await call('POST', '/api/users', { email, password: 'Passw0rdOk' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body.data.id as string;
  };
  const allowed = async (objectId: string, consistencyToken?: string) => {
    const answer = await call('POST', '/api/fga/check', { ...viewer(objectId), ...(consistencyToken ? { consistencyToken } : {}) });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    return answer.body.data.allowed as boolean;
  };

  const before = await createUser('before@acme.test');
  const model = await call('POST', '/api/fga/models', { name: 'docs', dsl: MODEL });
  expect((await call('POST', `/api/fga/models/${model.body.data.id}/activate`)).status).toBe(200);
  expect((await call('POST', '/api/fga/tuples', viewer('d1'))).status).toBe(201);
  expect(await allowed('d1')).toBe(true);

  const readiness = watchReadiness(h);
  await fault.begin();
  await vi.waitFor(() => expect(readiness.statuses).toContain(503), RECOVERY);
  const during = await call('POST', '/api/users', { email: 'during@acme.test', password: 'Passw0rdOk' });
  // The embedded cluster may be back already; a failure is 503 SERVICE_UNAVAILABLE, never a 500.
  if (during.status !== 201) expect([during.status, during.body.error.code]).toEqual([503, 'SERVICE_UNAVAILABLE']);
  await fault.end();
  await vi.waitFor(() => expect(readiness.statuses.at(-1)).toBe(200), RECOVERY);
  await readiness.stop();
  expect(new Set(readiness.statuses)).toEqual(new Set([200, 503]));

  const beforeRead = await call('GET', `/api/users/${before}`);
  expect(beforeRead.body.data?.email, JSON.stringify(beforeRead.body)).toBe('before@acme.test');
  expect(await allowed('d1')).toBe(true);

  const after = await createUser('after@acme.test');
  expect((await call('GET', `/api/users/${after}`)).body.data.email).toBe('after@acme.test');
  const written = await call('POST', '/api/fga/tuples', viewer('d2'));
  expect(written.status).toBe(201);
  expect(await allowed('d2', written.body.data.consistencyToken)).toBe(true);

  await vi.waitFor(async () => {
    const sessions = await h.inspect<{ query: string; application_name: string }>(
      'select query, application_name from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
    );
    expect(sessions.some((s) => /^listen /i.test(s.query))).toBe(true);
    expect(sessions.some((s) => s.application_name.startsWith('iam-leader:'))).toBe(true);
  }, RECOVERY);
  // The relay leads again and has published everything (in-process bus): its lag drops to zero.
  await vi.waitFor(async () => {
    const metrics = (await h.request({ method: 'GET', url: '/metrics' })).body as string;
    expect(metrics).toMatch(/^iam_relay_lag_events\{[^}]*\} 0$/m);
  }, RECOVERY);
}

/**
 * A TCP hop in front of the shared test cluster standing in for an external PostgreSQL that
 * restarts: close() drops every connection and refuses new ones, open() listens again on the
 * same port. Only this file's service is affected; the cluster serves the other test files.
 */
async function tcpProxy(target: URL) {
  const sockets = new Set<net.Socket>();
  let server: net.Server | null = null;
  const port = await freePort();
  const proxy = {
    port,
    async open() {
      server = net.createServer((client) => {
        const upstream = net.connect(Number(target.port), target.hostname);
        for (const [from, to] of [[client, upstream], [upstream, client]] as const) {
          sockets.add(from);
          from.pipe(to);
          from.on('error', () => to.destroy());
          from.on('close', () => {
            sockets.delete(from);
            to.destroy();
          });
        }
      });
      server.listen(port, '127.0.0.1');
      await once(server, 'listening');
    },
    async close() {
      const closing = server;
      server = null;
      if (!closing) return;
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => closing.close(resolve));
    },
  };
  await proxy.open();
  return proxy;
}

describe('recovery from a lost database', () => {
  const cleanups: (() => Promise<void>)[] = [];
  // Every cleanup runs even when one fails (the data folder is removed last); the first failure is reported.
  afterAll(async () => {
    const failures: unknown[] = [];
    for (const cleanup of cleanups.reverse()) await cleanup().catch((error: unknown) => failures.push(error));
    if (failures.length) throw failures[0];
  });

  it('restarts its embedded PostgreSQL after a kill -9 and recovers with nothing acknowledged lost', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'iam-recovery-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const config = loadConfig({
      DATA_DIR: dataDir,
      EMBEDDED_POSTGRES_PORT: String(await freePort()),
      IAM_BOOTSTRAP_TENANT: PLATFORM,
      IAM_ISSUER: 'http://iam.test',
      SUBSCRIPTION_POLL_MS: '200',
      RATE_LIMIT_ENABLED: 'false',
    });
    const logger = createLogger(process.env.TEST_LOG_LEVEL ?? 'silent');
    const storage = await openStorage(config, logger);
    cleanups.push(() => storage.close());
    const service = await buildService({ config, logger, pool: storage.pool, store: storage.store, clock: systemClock, masterKey: 'test-master-key' });
    await service.start();
    cleanups.push(() => service.stop());
    const outside = new pg.Pool({ connectionString: (storage.pool.options as { connectionString: string }).connectionString, max: 1 });
    outside.on('error', () => undefined);
    cleanups.push(() => outside.end());

    await expectRecovery(
      {
        request: requestThrough(service),
        token: tokenOf(service),
        inspect: async (sql, params) => (await outside.query(sql, params)).rows,
      },
      {
        async begin() {
          const postmasterPid = Number((await readFile(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8')).split('\n')[0]);
          process.kill(postmasterPid, 'SIGKILL');
        },
        end: async () => undefined,
      },
    );
  }, 180_000);

  it('reconnects to an external PostgreSQL that went away (connections dropped, new ones refused) and came back', async () => {
    const db = await createTestDatabase();
    cleanups.push(() => db.drop());
    const proxy = await tcpProxy(new URL(db.url));
    cleanups.push(() => proxy.close());
    const url = new URL(db.url);
    url.port = String(proxy.port);
    const pool = createPool(url.toString(), 40);
    cleanups.push(() => pool.end());
    const t = await startTestService({ db: { url: url.toString(), pool, drop: async () => undefined } });
    cleanups.push(() => t.close());

    await expectRecovery(
      { request: t.request, token: t.token, inspect: async (sql, params) => (await db.pool.query(sql, params)).rows },
      { begin: () => proxy.close(), end: () => proxy.open() },
    );
  }, 180_000);
});
