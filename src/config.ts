import { z } from 'zod';
import { StartupError } from './platform/process-lifecycle.ts';

const booleanFromEnv = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((value) => value === 'true' || value === '1' || value === 'yes');

const optionalString = z
  .string()
  .optional()
  .transform((value) => (value === undefined || value.trim() === '' ? undefined : value));

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;

/** `500ms`, `2s`, `5m`, `12h` in milliseconds, or null. */
function durationMs(text: string): number | null {
  const match = /^(\d+)(ms|s|m|h)$/.exec(text);
  return match ? Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS] : null;
}

/** Every environment setting of the service, with its default. Read once at start. */
const configSchema = z
  .object({
    NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
    PORT: z.coerce.number().int().min(0).max(65535).default(3000),
    HOST: z.string().min(1).default('0.0.0.0'),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    DATA_DIR: z.string().min(1).default('./.data'),
    DATABASE_URL: optionalString.pipe(z.url().optional()),
    DATABASE_POOL_SIZE: z.coerce.number().int().min(2).max(200).default(20),
    EMBEDDED_POSTGRES_PORT: z.coerce.number().int().min(1).max(65535).default(54329),
    KURRENTDB_CONNECTION_STRING: optionalString,
    KAFKA_BROKERS: optionalString,
    IAM_ISSUER: optionalString.pipe(z.url().optional()),
    IAM_MASTER_KEY: optionalString,
    IAM_BOOTSTRAP_TENANT: optionalString,
    IAM_BOOTSTRAP_ADMIN_EMAIL: optionalString,
    IAM_BOOTSTRAP_ADMIN_PASSWORD: optionalString,
    IAM_DEFAULT_TENANT: optionalString,
    IAM_ALLOW_PRIVATE_NETWORK_TARGETS: booleanFromEnv.default(false),
    /** How long a webhook or log-stream receiver has to answer one delivery attempt. */
    IAM_OUTBOUND_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(30_000),
    /** Requests sent ahead on one keep-alive connection to a receiver (HTTP/1.1 pipelining); 1 turns it off. */
    IAM_OUTBOUND_PIPELINED: z.coerce.number().int().min(1).max(64).default(8),
    /**
     * While a receiver fails (an attempt failed and none got through since), its new deliveries wait
     * without an attempt; one of them is sent this often to see whether it answers again.
     */
    IAM_OUTBOUND_PROBE_INTERVAL_MS: z.coerce.number().int().min(100).max(3_600_000).default(5_000),
    /**
     * A PEM file of certificates outbound deliveries trust beside the public roots (a private CA, a
     * test receiver's self-signed certificate). Read at start; NODE_EXTRA_CA_CERTS works as well.
     */
    IAM_OUTBOUND_CA_FILE: optionalString,
    /** Waits before each webhook retry (comma-separated, units ms, s, m, h); tests shorten it. */
    IAM_WEBHOOK_RETRY_SCHEDULE: z
      .string()
      .default('1m,5m,30m,2h,12h')
      .transform((value, context) => {
        const delays = value.split(',').map((part) => durationMs(part.trim()));
        if (delays.some((delay) => delay === null)) context.addIssue({ code: 'custom', message: 'expected durations such as 1m,5m,30m,2h,12h' });
        return delays as number[];
      }),
    /** The largest wait before a log stream's first retry; each retry doubles it, up to 6 hours (tests shorten it). */
    IAM_LOG_STREAM_RETRY_BASE_MS: z.coerce.number().int().min(1).max(3_600_000).default(30_000),
    /** Replaces LOG_PLATFORM_A's regional intake URL (tests, proxies). */
    IAM_LOG_PLATFORM_A_URL: optionalString.pipe(z.url().optional()),
    /** Outgoing e-mail server, `smtp://` or `smtps://` (implicit TLS) with credentials in the URL; unset: the log. */
    SMTP_URL: optionalString.pipe(z.string().regex(/^smtps?:\/\//i, 'must be an smtp:// or smtps:// URL').optional()),
    /**
     * Peers whose X-Forwarded-For names the client address (fastify trustProxy), which per-address
     * rate limits and audit records use: `true`, `false`, or addresses, CIDRs and the names
     * loopback, linklocal, uniquelocal. The default trusts proxies on private networks only, so a
     * client reaching the service directly cannot pick its own address.
     */
    HTTP_TRUST_PROXY: z
      .string()
      .default('loopback,linklocal,uniquelocal')
      .transform((value) => (value === 'true' ? true : value === 'false' ? false : value)),
    /** Largest accepted request body in bytes (file uploads have their own limit). */
    HTTP_BODY_LIMIT: z.coerce.number().int().min(1024).default(1_048_576),
    /** A request's whole processing; past it 503 REQUEST_TIMEOUT (the work is told to stop). */
    HTTP_REQUEST_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
    /** Receiving a request's headers, and the whole request (body included): slow clients are cut off with 408. */
    HTTP_HEADERS_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(10_000),
    HTTP_RECEIVE_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
    HTTP_KEEP_ALIVE_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(72_000),
    /** All request headers together, in bytes; larger: 431. */
    HTTP_MAX_HEADER_BYTES: z.coerce.number().int().min(1024).max(1_048_576).default(16_384),
    /** How long a write waits for its read models before answering anyway. */
    READ_YOUR_WRITES_TIMEOUT_MS: z.coerce.number().int().min(0).max(30_000).default(2000),
    /** Fallback poll interval of event-store subscribers when no notification arrives. */
    SUBSCRIPTION_POLL_MS: z.coerce.number().int().min(10).max(60_000).default(1000),
    /** The shared log reader's reads come at most this often once caught up: what is appended meanwhile is one batch for every follower. */
    SUBSCRIPTION_READ_INTERVAL_MS: z.coerce.number().int().min(0).max(1000).default(20),
    /** Access-token signature: RS256 or ES256 (published in the JWKS), or HS256 (a secret; clients use /api/auth/validate). */
    IAM_JWT_ALG: z.enum(['RS256', 'ES256', 'HS256']).default('RS256'),
    /** argon2id cost; the defaults are OWASP's minimum (19 MiB, 2 passes, 1 lane). */
    ARGON2_MEMORY_KIB: z.coerce.number().int().min(1024).max(4_194_304).default(19_456),
    ARGON2_ITERATIONS: z.coerce.number().int().min(1).max(100).default(2),
    ARGON2_PARALLELISM: z.coerce.number().int().min(1).max(64).default(1),
    /**
     * The nice value of libuv's pool threads (RS256 signatures, argon2 hashes), set at start on
     * Linux; the event loop keeps its own, so with every core busy it is never queued behind the
     * pool (docs/performance.md, client_credentials tokens, session 17). 0 leaves them as they are.
     */
    THREAD_POOL_NICE: z.coerce.number().int().min(0).max(19).default(10),
    /** Kafka topic of the relayed event log, created at start when missing. */
    KAFKA_TOPIC: z.string().min(1).default('iam.events'),
    KAFKA_TOPIC_PARTITIONS: z.coerce.number().int().min(1).max(1000).default(6),
    KAFKA_REPLICATION_FACTOR: z.coerce.number().int().min(1).max(10).default(1),
    /** Run the event-log relay inside the service (turn off when it runs as its own process). */
    IAM_RELAY_ENABLED: booleanFromEnv.default(true),
    /** Where `npm run relay` serves its Prometheus metrics (0: nowhere). */
    IAM_RELAY_METRICS_PORT: z.coerce.number().int().min(0).max(65535).default(9464),
    /** Where rate-limit counters live: this process (one instance) or PostgreSQL (several instances). */
    RATE_LIMIT_STORE: z.enum(['memory', 'postgres']).default('memory'),
    RATE_LIMIT_ENABLED: booleanFromEnv.default(true),
    /** Requests per window and window length (seconds) of each tier of the spec. */
    RATE_LIMIT_AUTH_MAX: z.coerce.number().int().min(1).default(10),
    RATE_LIMIT_AUTH_WINDOW_S: z.coerce.number().int().min(1).default(60),
    RATE_LIMIT_SENSITIVE_MAX: z.coerce.number().int().min(1).default(30),
    RATE_LIMIT_SENSITIVE_WINDOW_S: z.coerce.number().int().min(1).default(60),
    RATE_LIMIT_API_MAX: z.coerce.number().int().min(1).default(600),
    RATE_LIMIT_API_WINDOW_S: z.coerce.number().int().min(1).default(60),
    RATE_LIMIT_PUBLIC_MAX: z.coerce.number().int().min(1).default(300),
    RATE_LIMIT_PUBLIC_WINDOW_S: z.coerce.number().int().min(1).default(60),
    /** How often ended sessions are recorded as SessionExpired events. */
    SESSION_SWEEP_INTERVAL_S: z.coerce.number().int().min(1).max(86_400).default(60),
    /** Sender address of outgoing e-mail. */
    SMTP_FROM: z.string().min(3).default('IAM <no-reply@localhost>'),
    /**
     * FGA asOf with at most this many tuple changes since its instant is answered from the live
     * index with them undone (docs/event-history.md); older instants look each step up in the history.
     */
    FGA_AS_OF_RECENT_CHANGES: z.coerce.number().int().min(0).max(1_000_000).default(10_000),
    /** FGA check answers kept while their tenant's tuples and model stay as they were (0: none kept, every check evaluated). */
    FGA_CHECK_ANSWERS_KEPT: z.coerce.number().int().min(0).max(1_000_000).default(10_000),
    /** PERMISSION_CHECK audit entries (every FGA check, every denied permission): on by default. */
    AUDIT_PERMISSION_CHECKS: booleanFromEnv.default(true),
    /** Their writer's queue bound (entries beyond it are dropped and counted) and batching. */
    AUDIT_QUEUE_MAX: z.coerce.number().int().min(1).default(50_000),
    AUDIT_BATCH_SIZE: z.coerce.number().int().min(1).max(4000).default(1000),
    AUDIT_FLUSH_INTERVAL_MS: z.coerce.number().int().min(1).max(60_000).default(250),
    /** Public base URL of the pages that complete a password reset or a magic link (the token is appended). */
    IAM_PUBLIC_URL: optionalString.pipe(z.url().optional()),
  })
  .transform((env) => ({
    ...env,
    IAM_ISSUER: env.IAM_ISSUER ?? `http://localhost:${env.PORT}`,
    IAM_PUBLIC_URL: env.IAM_PUBLIC_URL ?? env.IAM_ISSUER ?? `http://localhost:${env.PORT}`,
  }));

export type Config = z.infer<typeof configSchema>;

export class ConfigError extends StartupError {
  constructor(readonly issues: string[]) {
    super(`Invalid configuration:\n  ${issues.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

/** Parses the environment; a bad variable fails fast with its name in the message. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const result = configSchema.safeParse(env);
  if (!result.success) {
    throw new ConfigError(result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`));
  }
  return result.data;
}
