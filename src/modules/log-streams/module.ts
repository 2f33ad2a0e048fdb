import type { PublicEvent } from '../../platform/bus/port.ts';
import { tenantTargetsAt } from '../../platform/bus/tenant-targets.ts';
import type { CommandContext } from '../../platform/commands/context.ts';
import type { ReservationNames } from '../../platform/commands/reservation-names.ts';
import { notFound, validationError } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { OutboundEngine } from '../../platform/outbound/engine.ts';
import { assertDeliverable, type OutboundFeatureDeps } from '../../platform/outbound/feature.ts';
import { logStreamChannel, TEST_ACTION, type AuditedEntry } from './channel.ts';
import { logStreamCommands } from './commands.ts';
import { configSchemas, maskedConfig, withStoredSecrets, type AnyLogStreamConfig } from './config.ts';
import { destinationRequest, type LogRecord } from './destinations.ts';
import { logStreamError } from './errors.ts';
import type { LogStreamType } from './events.ts';
import { logStreamQueries, type LogStream, type LogStreamQueries } from './queries.ts';

export interface LogStreamsModuleDeps extends OutboundFeatureDeps {
  reservationNames: ReservationNames;
  /** The read model's queries (wrapped for read-your-writes by the composition root). */
  queries: LogStreamQueries;
  auditEntry(event: PublicEvent): Promise<AuditedEntry | null>;
  isAudited(type: string): boolean;
  /** IAM_LOG_STREAM_RETRY_BASE_MS: the first retry's largest wait. */
  retryBaseMs: number;
  platformAUrl: string | undefined;
}

export interface NewLogStream {
  name: string;
  type: LogStreamType;
  config: AnyLogStreamConfig;
  eventFilters?: string[] | undefined;
}

export interface LogStreamChanges {
  name?: string | undefined;
  config?: Record<string, unknown> | undefined;
  status?: 'active' | 'paused' | undefined;
  eventFilters?: string[] | null | undefined;
}

/** The URLs a configuration sends to (the S3 endpoint is checked again at each connection). */
function urlsOf(type: LogStreamType, config: AnyLogStreamConfig, platformAUrl: string | undefined): string[] {
  if (type === 'WEBHOOK' && 'url' in config) return [config.url];
  if (type === 'LOG_PLATFORM_B' && 'hecUrl' in config) return [config.hecUrl];
  if (type === 'OBJECT_STORE' && 'endpoint' in config && config.endpoint) return [config.endpoint];
  if (type === 'LOG_PLATFORM_A' && platformAUrl) return [platformAUrl];
  return [];
}

/** Log streams (commands, read model) and their deliveries on the shared outbound engine. */
export function logStreamsModule(deps: LogStreamsModuleDeps) {
  const { queries } = deps;
  const commands = logStreamCommands(deps);
  // The engine takes its bus, pool, client, clock, metrics and timeout from the module's dependencies.
  const activeStreams = tenantTargetsAt(deps.readModels, { projection: 'log-streams', load: (tenant) => logStreamQueries(deps.pool).active(tenant), timeoutMs: deps.readModelTimeoutMs });
  const engine = new OutboundEngine({ ...deps, channel: logStreamChannel({ ...deps, activeStreams, commands }) });
  const existing = async (tenant: string, id: string) => (await queries.get(tenant, id)) ?? Promise.reject(notFound('Log stream'));

  async function assertConfigDeliverable(type: LogStreamType, config: AnyLogStreamConfig): Promise<void> {
    for (const url of urlsOf(type, config, deps.platformAUrl)) await assertDeliverable(deps.client, url, 'config');
  }

  /** The creation's test delivery (action LOG_STREAM_TEST), made before anything is saved. */
  async function testDelivery(logStreamId: string, stream: NewLogStream, context: CommandContext): Promise<void> {
    const record: LogRecord = {
      action: TEST_ACTION,
      resource: 'log_stream',
      resourceId: logStreamId,
      status: 'success',
      userId: context.actor === 'system' ? null : context.actor,
      clientIp: context.clientIp ?? null,
      userAgent: context.userAgent ?? null,
      metadata: { name: stream.name, type: stream.type },
      timestamp: deps.clock.now().toISOString(),
    };
    const request = destinationRequest(deps, stream.type, stream.config, JSON.stringify(record));
    const signal = AbortSignal.timeout(deps.timeoutMs);
    const result = 'send' in request ? await request.send(signal) : await deps.client.post(request, signal);
    if (!result.ok) throw logStreamError('TEST_DELIVERY_FAILED', `The test delivery failed: ${result.error ?? `status ${result.status}`}`);
  }

  return {
    queries,

    async create(tenant: string, stream: NewLogStream, context: CommandContext): Promise<LogStream> {
      await assertConfigDeliverable(stream.type, stream.config);
      const logStreamId = newId();
      await testDelivery(logStreamId, stream, context);
      const settings = {
        name: stream.name,
        type: stream.type,
        config: maskedConfig(stream.config),
        sealedConfig: deps.secretBox.seal(JSON.stringify(stream.config)),
        eventFilters: stream.eventFilters ?? null,
      };
      const { occurredAt } = await commands.create(tenant, logStreamId, settings, context);
      const { sealedConfig: _sealed, ...shown } = settings;
      return { id: logStreamId, ...shown, status: 'active', createdAt: occurredAt, updatedAt: occurredAt };
    },

    async update(tenant: string, id: string, changes: LogStreamChanges, context: CommandContext): Promise<LogStream> {
      const before = await existing(tenant, id);
      const { name, eventFilters, status } = changes;
      let sealed: { config: Record<string, unknown>; sealedConfig: string } | undefined;
      if (changes.config) {
        const target = (await queries.target(tenant, id))!;
        const stored = JSON.parse(deps.secretBox.open(target.sealedConfig)) as Record<string, unknown>;
        const parsed = configSchemas[before.type].safeParse(withStoredSecrets(changes.config, stored));
        if (!parsed.success) {
          const details = parsed.error.issues.map((issue) => ({ path: ['body', 'config', ...issue.path].join('.'), message: issue.message }));
          throw validationError('Invalid configuration for this stream type', details);
        }
        await assertConfigDeliverable(before.type, parsed.data);
        if (JSON.stringify(parsed.data) !== JSON.stringify(stored)) {
          sealed = { config: maskedConfig(parsed.data), sealedConfig: deps.secretBox.seal(JSON.stringify(parsed.data)) };
        }
      }
      if (name !== undefined || eventFilters !== undefined || sealed) await commands.update(tenant, id, { name, eventFilters, ...sealed }, context);
      if (status) {
        await commands.setStatus(tenant, id, status, context);
        // Back from error (or a pause): failures before count no more. Paused: what waits is dropped.
        if (status === 'active' && before.status !== 'active') await engine.queue.resetFailures(id);
        if (status === 'paused' && before.status === 'active') await engine.queue.cancelWaiting(id, 'the stream was paused');
      }
      return existing(tenant, id);
    },

    async delete(tenant: string, id: string, context: CommandContext): Promise<void> {
      await existing(tenant, id);
      await commands.delete(tenant, id, context);
      await engine.queue.cancelWaiting(id, 'the stream was deleted');
    },

    /** Every stream with its last delivery time. */
    async list(tenant: string) {
      const streams = await queries.list(tenant);
      const stats = await engine.queue.targetStats(tenant, streams.map((s) => s.id));
      return streams.map((stream) => ({ ...stream, lastDeliveryAt: stats.get(stream.id)?.lastDeliveryAt ?? null }));
    },

    /** One stream with its delivery figures (spec: deliveryCount, errorCount, lastError). */
    async get(tenant: string, id: string) {
      const stream = await existing(tenant, id);
      const stats = (await engine.queue.targetStats(tenant, [id])).get(id);
      return { ...stream, lastDeliveryAt: stats?.lastDeliveryAt ?? null, deliveryCount: stats?.deliveryCount ?? 0, errorCount: stats?.errorCount ?? 0, lastError: stats?.lastError ?? null };
    },

    start: () => engine.start(),
    stop: () => engine.stop(),
  };
}

export type LogStreamsModule = ReturnType<typeof logStreamsModule>;
