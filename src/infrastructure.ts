import { readFileSync } from 'node:fs';
import type { Logger } from 'pino';
import { ConfigError, type Config } from './config.ts';
import type { Clock } from './platform/clock.ts';
import { openEventBus } from './platform/bus/open.ts';
import type { Queryable } from './platform/db/pool.ts';
import { openDatabase } from './platform/db/open.ts';
import { openEventStore } from './platform/eventstore/open.ts';
import type { AccessTokenVerifier } from './platform/http/rate-limit/caller.ts';
import { callerFromAccessToken } from './platform/http/rate-limit/caller.ts';
import { MemoryRateLimitStore } from './platform/http/rate-limit/memory-store.ts';
import type { RateLimitOptions } from './platform/http/rate-limit/plugin.ts';
import { PostgresRateLimitStore } from './platform/http/rate-limit/postgres-store.ts';
import { buildTiers, type RouteRule } from './platform/http/rate-limit/tiers.ts';
import { openMailer } from './platform/mail/open.ts';
import { HttpsClient } from './platform/outbound/https-client.ts';

/**
 * Where the environment (src/config.ts) meets the platform: the platform never reads the
 * configuration, each piece is handed the settings it needs from here.
 */

/** The database (DATABASE_URL or the embedded PostgreSQL in DATA_DIR) and the event store on it. */
export async function openStorage(config: Config, logger: Logger) {
  const database = await openDatabase(
    { url: config.DATABASE_URL, poolSize: config.DATABASE_POOL_SIZE, embedded: { dataDir: config.DATA_DIR, port: config.EMBEDDED_POSTGRES_PORT } },
    logger,
  );
  const store = await openEventStore(
    { kurrentdbConnectionString: config.KURRENTDB_CONNECTION_STRING, pollIntervalMs: config.SUBSCRIPTION_POLL_MS },
    database.pool,
  ).catch(async (error: unknown) => {
    await database.close();
    throw error;
  });
  return {
    pool: database.pool,
    store,
    async close() {
      await store.close();
      await database.close();
    },
  };
}

/** Kafka when KAFKA_BROKERS is set, the in-process bus otherwise. */
export function openBus(config: Config, logger: Logger) {
  const brokers = (config.KAFKA_BROKERS ?? '').split(',').map((broker) => broker.trim()).filter(Boolean);
  return openEventBus({ brokers }, logger);
}

export const openMailerFromConfig = (config: Config, logger: Logger) => openMailer({ smtpUrl: config.SMTP_URL, from: config.SMTP_FROM }, logger);

/**
 * The rate limits the environment asks for: the tiers' RATE_LIMIT_* numbers, counts in memory by
 * default (one instance) or in PostgreSQL with RATE_LIMIT_STORE=postgres (several instances).
 */
export function rateLimitsFromConfig(
  config: Config,
  deps: { db: Queryable; clock: Clock; logger: Logger; tokens: AccessTokenVerifier },
  rules: readonly RouteRule[],
): RateLimitOptions {
  return {
    rules,
    store: config.RATE_LIMIT_STORE === 'postgres' ? new PostgresRateLimitStore(deps.db, deps.clock, deps.logger) : new MemoryRateLimitStore(deps.clock),
    tiers: buildTiers({
      auth: { max: config.RATE_LIMIT_AUTH_MAX, windowSeconds: config.RATE_LIMIT_AUTH_WINDOW_S },
      sensitive: { max: config.RATE_LIMIT_SENSITIVE_MAX, windowSeconds: config.RATE_LIMIT_SENSITIVE_WINDOW_S },
      api: { max: config.RATE_LIMIT_API_MAX, windowSeconds: config.RATE_LIMIT_API_WINDOW_S },
      public: { max: config.RATE_LIMIT_PUBLIC_MAX, windowSeconds: config.RATE_LIMIT_PUBLIC_WINDOW_S },
    }),
    identifyCaller: callerFromAccessToken(deps.tokens),
  };
}

/** The client of webhook and log-stream deliveries, with the address policy and CA file of the environment. */
export function outboundClientFromConfig(config: Config): HttpsClient {
  return new HttpsClient({
    allowPrivateNetworks: config.IAM_ALLOW_PRIVATE_NETWORK_TARGETS,
    timeoutMs: config.IAM_OUTBOUND_TIMEOUT_MS,
    maxPipelined: config.IAM_OUTBOUND_PIPELINED,
    extraCaPem: config.IAM_OUTBOUND_CA_FILE ? readCaFile(config.IAM_OUTBOUND_CA_FILE) : undefined,
  });
}

function readCaFile(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError([`IAM_OUTBOUND_CA_FILE: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? String(error)})`]);
  }
}
