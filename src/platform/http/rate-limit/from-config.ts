import type { Logger } from 'pino';
import type { Config } from '../../../config.ts';
import type { Clock } from '../../clock.ts';
import type { Queryable } from '../../db/pool.ts';
import { callerFromAccessToken, type AccessTokenVerifier } from './caller.ts';
import { MemoryRateLimitStore } from './memory-store.ts';
import type { RateLimitOptions } from './plugin.ts';
import { PostgresRateLimitStore } from './postgres-store.ts';
import { tiersFromConfig } from './tiers.ts';

/**
 * The rate limits the environment asks for: the tiers' RATE_LIMIT_* numbers, counts in memory by
 * default (one instance) or in PostgreSQL with RATE_LIMIT_STORE=postgres (several instances).
 */
export function rateLimitsFromConfig(
  config: Config,
  deps: { db: Queryable; clock: Clock; logger: Logger; tokens: AccessTokenVerifier },
): RateLimitOptions {
  return {
    store: config.RATE_LIMIT_STORE === 'postgres' ? new PostgresRateLimitStore(deps.db, deps.clock, deps.logger) : new MemoryRateLimitStore(deps.clock),
    tiers: tiersFromConfig(config),
    identifyCaller: callerFromAccessToken(deps.tokens),
  };
}
