import type { Logger } from 'pino';
import type { Config } from './config.ts';
import { tokenAuthenticator } from './modules/auth/authenticator.ts';
import { TokenService } from './modules/auth/tokens.ts';
import { KeyRing } from './modules/keys/key-ring.ts';
import { registerKeyRoutes } from './modules/keys/routes.ts';
import { tenantCommands } from './modules/tenants/commands.ts';
import { tenantQueries } from './modules/tenants/queries.ts';
import { registerTenantRoutes } from './modules/tenants/routes.ts';
import type { Clock } from './platform/clock.ts';
import { systemContext } from './platform/commands/context.ts';
import { SecretBox } from './platform/crypto/secret-box.ts';
import type { Pool } from './platform/db/pool.ts';
import type { EventStore } from './platform/eventstore/port.ts';
import { createHttpServer } from './platform/http/server.ts';
import { registerSystemRoutes } from './platform/http/system-routes.ts';
import { registerTenantResolution } from './platform/http/tenant-resolution.ts';
import { createMetrics } from './platform/metrics.ts';
import { registerProjectionLag } from './platform/projections/lag-metric.ts';
import { ProjectionRunner } from './platform/projections/runner.ts';
import { AppError } from './platform/errors.ts';
import { allProjections } from './projections.ts';

export interface Infrastructure {
  config: Config;
  logger: Logger;
  pool: Pool;
  store: EventStore;
  clock: Clock;
  masterKey: string;
}

const VERSION = '0.1.0';

/** Composition root of the modules: wires commands, queries, projections and routes. */
export async function buildService(infra: Infrastructure) {
  const { config, logger, pool, store, clock } = infra;
  const platformTenant = config.IAM_BOOTSTRAP_TENANT;
  const metrics = createMetrics();
  const runner = new ProjectionRunner(allProjections, store, pool, logger);
  registerProjectionLag(metrics, runner, pool);

  const secretBox = new SecretBox(infra.masterKey);
  const keyRing = new KeyRing({ store, clock, secretBox }, 'RS256', platformTenant ?? 'platform');
  const tokens = new TokenService(keyRing, config.IAM_ISSUER, clock);
  const commandDeps = { store, clock };
  const tenants = { commands: tenantCommands({ ...commandDeps, platformTenant }), queries: tenantQueries(pool) };

  const readYourWrites = async (position: bigint, readModels: string[]) => {
    if (position === 0n) return;
    const caughtUp = await runner.waitFor(position, config.READ_YOUR_WRITES_TIMEOUT_MS, readModels);
    if (!caughtUp) logger.warn({ position: String(position), readModels }, 'read models lag behind a write');
  };

  const app = await createHttpServer({ logger, metrics, bodyLimit: config.HTTP_BODY_LIMIT, issuer: config.IAM_ISSUER, version: VERSION });
  app.decorate('authenticator', tokenAuthenticator(tokens, pool));
  registerTenantResolution(app, { find: (name) => tenants.queries.findByName(name), defaultTenant: config.IAM_DEFAULT_TENANT });
  registerSystemRoutes(app, { db: pool, metrics, projectionsRunning: () => runner.running });
  registerKeyRoutes(app, { keyRing, issuer: config.IAM_ISSUER, platformTenant });
  registerTenantRoutes(app, { ...tenants, platformTenant, readYourWrites });

  /** Creates the platform tenant on first start (decisions.md, Bootstrap); a no-op afterwards. */
  async function bootstrap(): Promise<void> {
    if (!platformTenant) return;
    try {
      const { position } = await tenants.commands.create({ name: platformTenant }, systemContext(platformTenant));
      await readYourWrites(position, ['tenants', 'roles']);
      logger.info({ tenant: platformTenant }, 'bootstrap: platform tenant created');
    } catch (error) {
      if (!(error instanceof AppError && error.code === 'TENANT_EXISTS')) throw error;
    }
  }

  return {
    app,
    runner,
    keyRing,
    tokens,
    async start(): Promise<void> {
      await keyRing.start();
      await runner.start();
      await bootstrap();
      await app.ready();
    },
    async stop(): Promise<void> {
      await app.close();
      await runner.stop();
    },
  };
}

export type Service = Awaited<ReturnType<typeof buildService>>;
