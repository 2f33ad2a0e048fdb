import type { Logger } from 'pino';
import { buildService, type Service } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/platform/logging.ts';
import { systemClock, type Clock } from '../../src/platform/clock.ts';
import { PostgresEventStore } from '../../src/platform/eventstore/postgres.ts';
import type { EventStore } from '../../src/platform/eventstore/port.ts';
import { createTestDatabase, type TestDatabase } from './database.ts';

export const PLATFORM = 'platform';
/** The master key of test services: tests that open sealed values (data keys, secrets) use it too. */
export const TEST_MASTER_KEY = 'test-master-key';

export interface TestService {
  service: Service;
  db: TestDatabase;
  /** The raw store: what is written (personal fields sealed). */
  store: PostgresEventStore;
  /** The store as the service reads it (catalogued: personal fields revealed, upcast): replays use it. */
  events: EventStore;
  request(options: {
    method: string;
    url: string;
    tenant?: string;
    token?: string;
    body?: unknown;
    headers?: Record<string, string>;
    /** The client's address (request.ip); fastify inject's default is 127.0.0.1. */
    remoteAddress?: string;
  }): Promise<{
    status: number;
    body: any;
    headers: Record<string, unknown>;
  }>;
  /** A real access token signed by the service's key ring. */
  token(claims: { sub: string; tenant: string; roles: string[]; sid?: string }): Promise<string>;
  close(): Promise<void>;
}

/** Requests through fastify's inject, with the tenant, token and JSON body headers filled in. */
export function requestThrough(service: Service): TestService['request'] {
  return async ({ method, url, tenant, token, body, headers = {}, remoteAddress }) => {
    const response = await service.app.inject({
      method: method as 'GET',
      url,
      headers: {
        ...(tenant ? { 'x-tenant': tenant } : {}),
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body !== undefined && typeof body !== 'string' ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      ...(body !== undefined ? { payload: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
      ...(remoteAddress ? { remoteAddress } : {}),
    });
    const text = response.body;
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // not JSON (metrics, downloads): keep the text
    }
    return { status: response.statusCode, body: parsed, headers: response.headers };
  };
}

/** Real access tokens signed by the service's key ring. */
export function tokenOf(service: Service): TestService['token'] {
  return async ({ sub, tenant, roles, sid }) => {
    const { token } = await service.tokens.issue({ sub, tid: tenant, roles, acr: 'aal1', amr: ['pwd'], ...(sid ? { sid } : {}) }, 900);
    return token;
  };
}

/** The real service (all modules, projections, routes) on a private database, driven in-process. */
export async function startTestService(
  options: {
    env?: Record<string, string>;
    clock?: Clock;
    /** Restart on an existing database. */
    db?: TestDatabase;
    /** Where the service logs (default: silent, or TEST_LOG_LEVEL to stdout). */
    logger?: Logger;
  } = {},
): Promise<TestService> {
  const { env = {}, clock = systemClock } = options;
  const db = options.db ?? (await createTestDatabase());
  const config = loadConfig({
    DATABASE_URL: db.url,
    IAM_BOOTSTRAP_TENANT: PLATFORM,
    IAM_ISSUER: 'http://iam.test',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    SUBSCRIPTION_POLL_MS: '200',
    // Tests of other concerns send many requests; the rate-limit tests turn limits on with small numbers.
    RATE_LIMIT_ENABLED: 'false',
    // A loaded CI machine must not turn slow answers into 503s; the resilience test sets its own.
    HTTP_REQUEST_TIMEOUT_MS: '120000',
    ...env,
  });
  const store = new PostgresEventStore(db.pool, { pollIntervalMs: config.SUBSCRIPTION_POLL_MS });
  const service = await buildService({ config, logger: options.logger ?? createLogger(process.env.TEST_LOG_LEVEL ?? 'silent'), pool: db.pool, store, clock, masterKey: TEST_MASTER_KEY });
  await service.start();
  return {
    service,
    db,
    store,
    events: service.store,
    request: requestThrough(service),
    token: tokenOf(service),
    async close() {
      await service.stop();
      await store.close();
      if (!options.db) await db.drop();
    },
  };
}
