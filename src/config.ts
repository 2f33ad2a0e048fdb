import { z } from 'zod';

const booleanFromEnv = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((value) => value === 'true' || value === '1' || value === 'yes');

const optionalString = z
  .string()
  .optional()
  .transform((value) => (value === undefined || value.trim() === '' ? undefined : value));

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
    SMTP_URL: optionalString,
    /** Largest accepted request body in bytes (file uploads have their own limit). */
    HTTP_BODY_LIMIT: z.coerce.number().int().min(1024).default(1_048_576),
    /** How long a write waits for its read models before answering anyway. */
    READ_YOUR_WRITES_TIMEOUT_MS: z.coerce.number().int().min(0).max(30_000).default(2000),
    /** Fallback poll interval of event-store subscribers when no notification arrives. */
    SUBSCRIPTION_POLL_MS: z.coerce.number().int().min(10).max(60_000).default(1000),
  })
  .transform((env) => ({
    ...env,
    IAM_ISSUER: env.IAM_ISSUER ?? `http://localhost:${env.PORT}`,
  }));

export type Config = z.infer<typeof configSchema>;

export class ConfigError extends Error {
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
