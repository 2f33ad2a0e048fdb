import { applicationCommands, applicationQueries, cachedApplications, registerApplicationCors, registerApplicationRoutes } from './modules/applications/index.ts';
import { OAUTH_GRANT_ERRORS, oauthModule } from './modules/oauth/index.ts';
import { PermissionCheckWriter, auditQueries, auditRuleOf, eventFeed, registerAuditLogRoutes, registerEventFeedRoutes, registerPermissionCheckAudit, registerUserHistoryRoutes, userAsOfHandler, userHistory } from './modules/audit/index.ts';
import { TokenService, authenticatedSessions, currentPasswordGuard, grantRegistry, linkDelivery, lockoutCommands, magicLinks, passwordFlows, passwordLogin, registerAuthRoutes, secondFactorGuard, secondFactorSignIn, registerCredentialRoutes, registerLinkPages, signup, tokenAuthenticator, userinfoClaims } from './modules/auth/index.ts';
import { emailLinkCommands } from './modules/email-links/index.ts';
import { TUPLE_TYPES_ANSWERED_FROM_INDEX, fgaModule, registerFgaRoutes } from './modules/fga/index.ts';
import { KeyRing, registerKeyRoutes } from './modules/keys/index.ts';
import { mfaCommands, registerMfaRoutes } from './modules/mfa/index.ts';
import { cachedRoles, registerRoleRoutes, roleCommands, roleQueries } from './modules/roles/index.ts';
import { SessionActivity, SessionExpirySweep, registerSessionRoutes, sessionActivityTypes, sessionCommands, sessionQueries, sessionReactions } from './modules/sessions/index.ts';
import { cachedSettings, registerSettingsRoutes, settingsCommands, settingsQueries } from './modules/settings/index.ts';
import { bootstrapPlatformTenant, cachedTenantLookup, registerTenantRoutes, tenantCommands, tenantQueries } from './modules/tenants/index.ts';
import { PasswordHasher, assertPasswordPolicy, cachedTokenSubjects, registerUserRoutes, userCommands, userQueries, userReactions } from './modules/users/index.ts';
import { registerWebhookRoutes, webhookQueries, webhooksModule } from './modules/webhooks/index.ts';
import { logStreamQueries, logStreamsModule, registerLogStreamRoutes } from './modules/log-streams/index.ts';
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import { openBus, openMailerFromConfig, outboundClientFromConfig, rateLimitsFromConfig } from './infrastructure.ts';
import { cataloguedStore, eventCatalogue, publicEventData } from './event-catalogue.ts';
import { BackgroundTasks } from './platform/background-tasks.ts';
import type { OutboundFeatureDeps } from './platform/outbound/feature.ts';
import { registerOutboundMetrics } from './platform/outbound/metrics.ts';
import { registerConsumerLag, registerRelayMetrics } from './platform/bus/bus-metrics.ts';
import { EventRelay, publicEnvelope } from './platform/bus/relay.ts';
import type { Clock } from './platform/clock.ts';
import { systemContext, type CommandContext } from './platform/commands/context.ts';
import { DataKeys } from './platform/crypto/data-keys.ts';
import { ReservationNames } from './platform/commands/reservation-names.ts';
import { SecretBox } from './platform/crypto/secret-box.ts';
import { lowerThreadPoolPriority } from './platform/thread-pool-priority.ts';
import type { Pool } from './platform/db/pool.ts';
import type { EventStore } from './platform/eventstore/port.ts';
import { SharedLogReader } from './platform/eventstore/shared-log-reader.ts';
import type { Mailer } from './platform/mail/port.ts';
import { registerRateLimit } from './platform/http/rate-limit/plugin.ts';
import { formCsrf } from './platform/http/form-csrf.ts';
import { eventsDocument } from './platform/events/asyncapi.ts';
import { registerAsyncApiRoute } from './platform/http/asyncapi-route.ts';
import { createHttpServer } from './platform/http/server.ts';
import { registerSystemRoutes } from './platform/http/system-routes.ts';
import { registerTenantResolution } from './platform/http/tenant-resolution.ts';
import { createMetrics } from './platform/metrics.ts';
import { registerProjectionLag, registerReactionLag } from './platform/projections/lag-metric.ts';
import { ReadYourWrites, readModelQueries, recordingWrites, reportingAppends, WriteLog } from './platform/projections/read-your-writes.ts';
import { ProjectionRunner } from './platform/projections/runner.ts';
import { ReactionRunner } from './platform/reactions/runner.ts';
import { allProjections } from './projections.ts';
import { rateLimitRules } from './rate-limit-rules.ts';
import { errorStatuses } from './error-statuses.ts';

export interface Infrastructure {
  config: Config;
  logger: Logger;
  pool: Pool;
  store: EventStore;
  clock: Clock;
  masterKey: string;
  /** Defaults to SMTP_URL's server, or the log. */
  mailer?: Mailer;
  /** Override argon2 cost (benchmarks and tests of other concerns may lower it). */
  hasher?: PasswordHasher;
}

const VERSION = '0.1.0';
/** How long the one-time bootstrap waits for the new tenant's read models (a start, not a request). */
const BOOTSTRAP_WAIT_MS = 60_000;

/** Composition root of the modules: wires commands, queries, projections and routes. */
export async function buildService(infra: Infrastructure) {
  const { config, logger, pool, clock } = infra;
  // Every append and read goes through the event catalogue, and every append of a request lands in
  // its write log (read-your-writes): no path can bypass either.
  const secretBox = new SecretBox(infra.masterKey);
  const dataKeys = new DataKeys(pool, secretBox);
  // One reader of the log serves every subscriber below (projections, reactions, relay, FGA index).
  const store = reportingAppends(new SharedLogReader(cataloguedStore(infra.store, dataKeys), { readIntervalMs: config.SUBSCRIPTION_READ_INTERVAL_MS }));
  const platformTenant = config.IAM_BOOTSTRAP_TENANT;
  const metrics = createMetrics();
  const runner = new ProjectionRunner(allProjections, store, pool, logger);
  registerProjectionLag(metrics, runner, pool);
  const readYourWrites = new ReadYourWrites(runner, config.READ_YOUR_WRITES_TIMEOUT_MS, logger, new Set([...sessionActivityTypes, ...TUPLE_TYPES_ANSWERED_FROM_INDEX]));
  // Committed events go out on the bus (Kafka when KAFKA_BROKERS is set, else in this process).
  const bus = await openBus(config, logger);
  const topic = config.KAFKA_TOPIC;
  registerConsumerLag(metrics, bus, logger);
  const relayMetrics = registerRelayMetrics(metrics, pool, store, topic);
  const relay = config.IAM_RELAY_ENABLED
    ? new EventRelay({ store, bus, database: pool.options, topic, publicData: publicEventData, logger: logger.child({ component: 'relay' }), metrics: relayMetrics })
    : null;

  const keyRing = new KeyRing({ store, clock, secretBox }, config.IAM_JWT_ALG, platformTenant ?? 'platform');
  const tokens = new TokenService(keyRing, config.IAM_ISSUER, clock);
  const hasher =
    infra.hasher ??
    new PasswordHasher({ memoryCost: config.ARGON2_MEMORY_KIB, timeCost: config.ARGON2_ITERATIONS, parallelism: config.ARGON2_PARALLELISM });
  const commandDeps = { store, clock, reservationNames: new ReservationNames(infra.masterKey) };
  // Settings, roles and the tenant lookup answer from per-instance caches the projections keep
  // current (src/platform/projections/read-model-cache.ts): the hot path makes no query for them.
  const settings = readModelQueries('settings', readYourWrites, cachedSettings(runner, settingsQueries(pool)));
  const roles = { commands: roleCommands(commandDeps), queries: readModelQueries('roles', readYourWrites, cachedRoles(runner, roleQueries(pool))) };
  const tenantReads = tenantQueries(pool);
  const tenants = {
    commands: tenantCommands({ ...commandDeps, platformTenant }),
    queries: readModelQueries('tenants', readYourWrites, { ...tenantReads, ...cachedTenantLookup(runner, tenantReads) }),
  };
  const users = {
    commands: userCommands({ ...commandDeps, hasher, roles: roles.queries, settings, dataKeys, currentPassword: currentPasswordGuard({ ...commandDeps, settings }) }),
    queries: readModelQueries('users', readYourWrites, userQueries(pool, () => clock.now())),
    subjects: readModelQueries('users', readYourWrites, cachedTokenSubjects(runner, store)),
  };

  const sessionReads = readModelQueries('sessions', readYourWrites, sessionQueries(pool, () => clock.now()));
  const sessions = { commands: sessionCommands({ ...commandDeps, queries: sessionReads }), queries: sessionReads };
  const reactions = new ReactionRunner([sessionReactions({ store, ...sessions, subjects: users.subjects }), userReactions({ store, ...users })], {
    store,
    pool,
    logger,
    readModels: runner,
  });
  registerReactionLag(metrics, reactions, pool);
  /** Waits (bounded) until the reactions to a write have run and every read model shows their commands. */
  const awaitReactions = async (position: bigint) => {
    if (position === 0n) return;
    const caused = await reactions.waitFor(position, config.READ_YOUR_WRITES_TIMEOUT_MS);
    const shown = caused !== null && (await runner.waitFor(caused, config.READ_YOUR_WRITES_TIMEOUT_MS));
    if (!shown) logger.warn({ position: String(position) }, 'reactions or read models lag behind a write');
  };
  const sessionSweep = new SessionExpirySweep({ ...sessions, logger, intervalMs: config.SESSION_SWEEP_INTERVAL_S * 1000 });
  const loginDeps = { ...commandDeps, hasher, tokens, roles: roles.queries, settings, sessions: sessions.commands };
  const login = passwordLogin(loginDeps);
  const completeSecondFactor = secondFactorSignIn({ ...loginDeps, secretBox });
  const authenticate = authenticatedSessions(loginDeps);
  const background = new BackgroundTasks(logger);
  const links = emailLinkCommands(commandDeps);
  const mailer = infra.mailer ?? openMailerFromConfig(config, logger);
  const requestLink = linkDelivery({ ...commandDeps, links, mailer, settings, background, publicUrl: config.IAM_PUBLIC_URL });
  const lockout = lockoutCommands(commandDeps);
  const passwords = passwordFlows({ store, users: users.commands, links, sessions: sessions.commands, lockout, requestLink });
  const clients = cachedApplications(runner, store);
  const oauth = oauthModule({ store, applications: readModelQueries('applications', readYourWrites, { byClientId: clients.byClientId }), clock, tokens, keyRing, issuer: config.IAM_ISSUER, roles: roles.queries, settings, sessions: sessions.commands, secretBox, subjects: users.subjects });
  const grants = oauth.grants(grantRegistry({ store, tokens, roles: roles.queries, settings, sessions: sessions.commands, subjects: users.subjects }));
  const outboundClient = outboundClientFromConfig(config);
  // What webhooks and log streams share: the delivery engine's bus, pool, client and limits.
  const outbound = {
    ...commandDeps,
    pool,
    readModels: runner,
    readModelTimeoutMs: config.READ_YOUR_WRITES_TIMEOUT_MS,
    bus,
    topic,
    client: outboundClient,
    secretBox,
    timeoutMs: config.IAM_OUTBOUND_TIMEOUT_MS,
    probeIntervalMs: config.IAM_OUTBOUND_PROBE_INTERVAL_MS,
    metrics: registerOutboundMetrics(metrics, clock),
    logger,
  } satisfies OutboundFeatureDeps;
  const webhooks = webhooksModule({
    ...outbound,
    queries: readModelQueries('webhooks', readYourWrites, webhookQueries(pool)),
    mailer,
    adminEmails: async (tenant) => (await users.queries.list(tenant, { page: 1, limit: 100, role: 'admin', status: 'active' })).items.map((user) => user.email),
    retrySchedule: config.IAM_WEBHOOK_RETRY_SCHEDULE,
  });
  const applications = { commands: applicationCommands({ ...commandDeps, forget: clients.forget }), queries: readModelQueries('applications', readYourWrites, applicationQueries(pool)) };
  const audit = auditQueries(pool);
  const logStreams = logStreamsModule({
    ...outbound,
    queries: readModelQueries('log-streams', readYourWrites, logStreamQueries(pool)),
    // The audit log's own entry, so a stream receives exactly what the log records.
    auditEntry: async (event) =>
      (await runner.waitFor(BigInt(event.position), config.READ_YOUR_WRITES_TIMEOUT_MS, ['audit'])) ? audit.get(event.tenantId, event.id) : null,
    isAudited: (type) => auditRuleOf(type) !== null,
    retryBaseMs: config.IAM_LOG_STREAM_RETRY_BASE_MS,
    platformAUrl: config.IAM_LOG_PLATFORM_A_URL,
  });
  const fga = fgaModule({
    store,
    clock,
    pool,
    logger,
    timeoutMs: config.READ_YOUR_WRITES_TIMEOUT_MS,
    readYourWrites,
    projectionReached: (name, position, timeoutMs) => runner.waitFor(position, timeoutMs, [name]),
    asOfRecentChangesLimit: config.FGA_AS_OF_RECENT_CHANGES,
    checkAnswersKept: config.FGA_CHECK_ANSWERS_KEPT,
  });

  const firstAdmin = {
    check: async (tenant: string, password: string) => assertPasswordPolicy(password, await settings.forTenant(tenant)),
    async create(tenant: string, email: string, password: string, context: CommandContext) {
      await users.commands.create(tenant, { email, password, roles: ['admin'], emailVerified: true }, { ...context, tenantId: tenant });
    },
  };

  const app = await createHttpServer({
    logger,
    metrics,
    bodyLimit: config.HTTP_BODY_LIMIT,
    limits: {
      handlerTimeoutMs: config.HTTP_REQUEST_TIMEOUT_MS,
      headersTimeoutMs: config.HTTP_HEADERS_TIMEOUT_MS,
      requestTimeoutMs: config.HTTP_RECEIVE_TIMEOUT_MS,
      keepAliveTimeoutMs: config.HTTP_KEEP_ALIVE_TIMEOUT_MS,
      maxHeaderBytes: config.HTTP_MAX_HEADER_BYTES,
    },
    trustProxy: config.HTTP_TRUST_PROXY,
    issuer: config.IAM_ISSUER,
    version: VERSION,
    errorStatuses,
    rateLimitRules,
  });
  const activity = new SessionActivity({ commands: sessions.commands, background, clock });
  app.decorate('readYourWrites', readYourWrites);
  app.decorate(
    'authenticator',
    tokenAuthenticator(tokens, roles.queries.permissionsOf, (tenant, sessionId, userId) => activity.touch(tenant, sessionId, userId), users.subjects.refused, clients.refused),
  );
  // Before tenant resolution: a flood is turned away before it costs a query.
  if (config.RATE_LIMIT_ENABLED) registerRateLimit(app, rateLimitsFromConfig(config, { db: pool, clock, logger, tokens }, rateLimitRules));
  registerTenantResolution(app, { find: (name) => tenants.queries.findLoadedByName(name), defaultTenant: config.IAM_DEFAULT_TENANT });
  registerSystemRoutes(app, { db: pool, metrics, projectionsRunning: () => runner.ready });
  const permissionChecks = new PermissionCheckWriter({
    db: pool,
    logger,
    metrics,
    maxQueue: config.AUDIT_QUEUE_MAX,
    batchSize: config.AUDIT_BATCH_SIZE,
    flushIntervalMs: config.AUDIT_FLUSH_INTERVAL_MS,
  });
  if (config.AUDIT_PERMISSION_CHECKS) registerPermissionCheckAudit(app, { writer: permissionChecks, clock, fgaCheckUrl: '/api/fga/check' });
  registerAsyncApiRoute(app, eventsDocument(eventCatalogue, { title: 'IAM service events', version: VERSION, topic }));
  registerKeyRoutes(app, { keyRing, issuer: config.IAM_ISSUER, platformTenant, providerMetadata: oauth.discovery(Object.keys(grants)) });
  registerTenantRoutes(app, { ...tenants, platformTenant, firstAdmin });
  registerRoleRoutes(app, { ...roles, awaitReactions });
  const history = userHistory(store, (event) => eventCatalogue.maskedData(event));
  registerUserRoutes(app, { ...users, awaitReactions, asOf: userAsOfHandler(history, clock) });
  registerUserHistoryRoutes(app, history);
  registerAuthRoutes(app, {
    login,
    completeSecondFactor,
    signup: signup({ users: users.commands, settings, authenticate }),
    grants,
    grantErrors: OAUTH_GRANT_ERRORS,
    sessions: sessions.commands,
    users: users.queries,
    userinfo: userinfoClaims({ subjects: users.subjects, roles: roles.queries }),
  });
  const magic = magicLinks({ store, links, authenticate, requestLink });
  registerCredentialRoutes(app, { passwords, magicLinks: magic, lockout });
  const csrf = formCsrf(infra.masterKey, { secureCookie: config.IAM_PUBLIC_URL.startsWith('https:') });
  registerLinkPages(app, { passwords, magicLinks: magic, completeSecondFactor, csrf });
  oauth.registerRoutes(app, { login, completeSecondFactor, csrf });
  registerMfaRoutes(app, { commands: mfaCommands({ ...commandDeps, secretBox, guard: secondFactorGuard({ ...commandDeps, settings }) }), subjects: users.subjects });
  registerSessionRoutes(app, sessions);
  registerSettingsRoutes(app, { commands: settingsCommands(commandDeps), queries: settings });
  registerFgaRoutes(app, fga, config.READ_YOUR_WRITES_TIMEOUT_MS);
  registerAuditLogRoutes(app, audit);
  registerEventFeedRoutes(app, eventFeed({ store, envelope: (event) => publicEnvelope(event, publicEventData), isKnownType: (type) => eventCatalogue.has(type) }));
  registerWebhookRoutes(app, webhooks);
  registerApplicationRoutes(app, applications);
  registerApplicationCors(app, applications.queries);
  registerLogStreamRoutes(app, logStreams);

  /** Creates the platform tenant and its admin on first start (decisions.md, Bootstrap); a no-op afterwards. */
  async function bootstrap(): Promise<void> {
    if (!platformTenant) return;
    const { IAM_BOOTSTRAP_ADMIN_EMAIL: adminEmail, IAM_BOOTSTRAP_ADMIN_PASSWORD: adminPassword } = config;
    const announce = (message: string) => logger.warn(message);
    // A start is not a request: on a busy machine the new tenant's roles may take longer to be
    // readable than a request's read-your-writes bound, and a start must not fail for it.
    const tenantReadable = async () => {
      if (!(await runner.waitFor(await store.lastWrittenPosition(), BOOTSTRAP_WAIT_MS, ['roles', 'settings']))) {
        logger.warn('bootstrap: the roles and settings read models still lag behind the new tenant');
      }
    };
    // Like a request: the admin's roles are looked up once the new tenant's roles are readable.
    const writes = new WriteLog();
    await recordingWrites(writes, () =>
      bootstrapPlatformTenant(
        { tenants: tenants.commands, firstAdmin, announce, tenantReadable },
        { tenant: platformTenant, adminEmail, adminPassword, context: systemContext(platformTenant) },
      ),
    );
    await readYourWrites.settle(writes);
  }

  return {
    app,
    /** The event store as the service reads it: catalogued, personal fields revealed (or "[ERASED]"). */
    store,
    runner,
    reactions,
    keyRing,
    tokens,
    sessionSweep,
    /** Work started by requests but not awaited by them (e-mails); tests drain it. */
    background,
    fga,
    permissionChecks,
    /** Consumers (webhooks, log streams) subscribe here to the relayed events on `topic`. */
    bus,
    webhooks,
    /** The token endpoint's grant types and their handlers (discovery lists exactly these). */
    grants,
    logStreams,
    async start(): Promise<void> {
      if (config.THREAD_POOL_NICE > 0) {
        // Scheduling only: where /proc or setpriority is unavailable the service runs as before.
        await lowerThreadPoolPriority(config.THREAD_POOL_NICE).catch((error: unknown) => logger.warn({ err: error }, 'libuv pool threads left at their priority'));
      }
      await keyRing.start();
      await runner.start();
      await reactions.start();
      await fga.start();
      await bus.ensureTopic(topic, { partitions: config.KAFKA_TOPIC_PARTITIONS, replicationFactor: config.KAFKA_REPLICATION_FACTOR });
      // Consumers join before the relay publishes, so the in-process bus hands them every event.
      await webhooks.start();
      await logStreams.start();
      relay?.start();
      await bootstrap();
      sessionSweep.start();
      await app.ready();
    },
    async stop(): Promise<void> {
      await app.close();
      await permissionChecks.drain();
      await background.drain();
      await sessionSweep.stop();
      await mailer.close();
      await relay?.stop();
      await webhooks.stop();
      await logStreams.stop();
      outboundClient.close();
      await fga.stop();
      await reactions.stop();
      await runner.stop();
      // Flushes publishes in flight and commits the consumers' offsets.
      await bus.close();
    },
  };
}

export type Service = Awaited<ReturnType<typeof buildService>>;
