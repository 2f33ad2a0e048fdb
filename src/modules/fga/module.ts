import type { Logger } from 'pino';
import type { Clock } from '../../platform/clock.ts';
import type { Pool } from '../../platform/db/pool.ts';
import type { EventStore } from '../../platform/eventstore/port.ts';
import type { HttpServer } from '../../platform/http/server.ts';
import { readModelQueries, type ReadYourWrites } from '../../platform/projections/read-your-writes.ts';
import { asDomainError } from './app-errors.ts';
import { modelCommands } from './models/commands.ts';
import { FGA_PROJECTION, modelQueries } from './models/queries.ts';
import { registerModelRoutes } from './models/routes.ts';
import { ActiveModels } from './serving/active-models.ts';
import { authorizationAsOf } from './serving/as-of.ts';
import { authorizationQueries } from './serving/authorization.ts';
import { registerAuthorizationRoutes } from './serving/routes.ts';
import { FGA_HISTORY_PROJECTION } from './serving/tuple-history.ts';
import { TupleIndexes } from './serving/tuple-indexes.ts';
import { tupleCommands } from './tuples/commands.ts';
import { TenantTupleWriter } from './tuples/tenant-writer.ts';
import { tupleQueries } from './tuples/queries.ts';
import { registerTupleRoutes } from './tuples/routes.ts';

export interface FgaDeps {
  store: EventStore;
  clock: Clock;
  pool: Pool;
  logger: Logger;
  /** Bound of every wait for the index or the read model (READ_YOUR_WRITES_TIMEOUT_MS). */
  timeoutMs: number;
  readYourWrites: ReadYourWrites;
  /** Whether a projection has applied the log up to `position`, waiting at most `timeoutMs`. */
  projectionReached: (name: string, position: bigint, timeoutMs: number) => Promise<boolean>;
  /** asOf with at most this many tuple changes since its instant reads the live index (0: the history only). */
  asOfRecentChangesLimit: number;
  /** Check answers kept at most, every tenant together (0: every check evaluated). */
  checkAnswersKept: number;
}

/**
 * The fine-grained authorization context: models and tuples (commands and read-model queries),
 * and the serving side (per-tenant in-memory indexes and active-model cache, both fed by the log).
 * `start` must run before requests are served.
 */
export function fgaModule(deps: FgaDeps) {
  const { store, clock, pool, logger, timeoutMs, readYourWrites, projectionReached, asOfRecentChangesLimit, checkAnswersKept } = deps;
  const activeModels = new ActiveModels({ store, clock });
  const indexes = new TupleIndexes({ store, pool, logger: logger.child({ module: 'fga' }), onModelEvent: (tenant) => activeModels.invalidate(tenant) });
  return {
    indexes,
    models: { commands: modelCommands({ store, clock }), queries: readModelQueries(FGA_PROJECTION, readYourWrites, modelQueries(pool)) },
    tuples: {
      commands: tupleCommands({
        writer: new TenantTupleWriter({ store, clock, index: { current: (tenant) => indexes.current(tenant), reached: (position) => indexes.waitFor(position, timeoutMs) } }),
        activeModel: (tenant) => activeModels.get(tenant).catch(asDomainError),
      }),
      queries: readModelQueries(FGA_HISTORY_PROJECTION, readYourWrites, tupleQueries(pool)),
    },
    authorization: authorizationQueries({
      models: activeModels,
      indexes,
      consistencyTimeoutMs: timeoutMs,
      lastWrittenPosition: () => store.lastWrittenPosition(),
      checkAnswersKept,
    }),
    asOf: authorizationAsOf({
      store,
      pool,
      clock,
      models: activeModels,
      historyReached: (position) => projectionReached(FGA_HISTORY_PROJECTION, position, timeoutMs),
      modelEventsSeen: (position) => indexes.waitFor(position, timeoutMs),
      liveIndex: { storeOf: (tenant) => indexes.storeOf(tenant), position: () => indexes.position.current },
      recentChangesLimit: asOfRecentChangesLimit,
    }),
    start: () => indexes.start(),
    stop: () => indexes.stop(),
  };
}

export type FgaModule = ReturnType<typeof fgaModule>;

/**
 * Registers every /api/fga route. A write answers once this instance's index reflects it (the HTTP
 * layer waits for the read model).
 */
export function registerFgaRoutes(app: HttpServer, fga: FgaModule, timeoutMs: number): void {
  const settle = async (position: bigint) => {
    if (position !== 0n) await fga.indexes.waitFor(position, timeoutMs);
  };
  registerModelRoutes(app, { ...fga.models, settle });
  registerTupleRoutes(app, { ...fga.tuples, settle });
  registerAuthorizationRoutes(app, fga.authorization, fga.asOf);
}
