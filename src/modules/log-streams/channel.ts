import type { PublicEvent } from '../../platform/bus/port.ts';
import { systemContext } from '../../platform/commands/context.ts';
import type { SecretBox } from '../../platform/crypto/secret-box.ts';
import type { OutboundChannel } from '../../platform/outbound/engine.ts';
import type { AnyLogStreamConfig } from './config.ts';
import type { LogStreamCommands } from './commands.ts';
import { destinationRequest, type DestinationDeps, type LogRecord } from './destinations.ts';
import type { ActiveLogStream, LogStreamQueries } from './queries.ts';
import { fullJitterDelayMs } from './retry.ts';

/** The fields of an audit entry a record carries (spec, Log stream delivery). */
export type AuditedEntry = Omit<LogRecord, 'timestamp'> & { createdAt: string };

/** Consecutive failed deliveries (8 attempts each) after which a stream goes to status error (spec, Limits). */
export const FAILURES_BEFORE_ERROR = 10;

/** The action of the delivery a stream's creation makes (decisions.md, Log streams). */
export const TEST_ACTION = 'LOG_STREAM_TEST';

export interface LogStreamChannelDeps extends DestinationDeps {
  queries: LogStreamQueries;
  /** The tenant's active streams as of the event (or later). */
  activeStreams(event: PublicEvent): Promise<ActiveLogStream[]>;
  commands: LogStreamCommands;
  secretBox: SecretBox;
  /** The audit log's entry of an event, once the audit projection has it; null if it lags past the bound. */
  auditEntry(event: PublicEvent): Promise<AuditedEntry | null>;
  /** Whether events of this type have an audit entry at all. */
  isAudited(type: string): boolean;
  retryBaseMs: number;
}

/** Log streams on the delivery engine: each audit entry goes to every active stream whose filters take its action. */
export function logStreamChannel(deps: LogStreamChannelDeps): OutboundChannel {
  return {
    name: 'log-streams',

    takes: (eventType) => deps.isAudited(eventType),

    async fanOut(event) {
      if (!deps.isAudited(event.type)) return [];
      // Entries from before a stream existed are not sent to it.
      const occurredAt = new Date(event.occurredAt);
      const streams = (await deps.activeStreams(event)).filter((stream) => stream.createdAt <= occurredAt);
      if (streams.length === 0) return [];
      const entry = await deps.auditEntry(event);
      // Thrown, the bus hands the batch again shortly: the audit projection is behind.
      if (!entry) throw new Error(`the audit log has no entry for event ${event.id} yet`);
      const { action, resource, resourceId, status, userId, clientIp, userAgent, metadata, createdAt } = entry;
      const record: LogRecord = { action, resource, resourceId, status, userId, clientIp, userAgent, metadata, timestamp: createdAt };
      const payload = JSON.stringify(record);
      return streams
        .filter((stream) => stream.eventFilters === null || stream.eventFilters.includes(record.action))
        .map((stream) => ({ tenantId: event.tenantId, targetId: stream.id, eventType: record.action, payload }));
    },

    async prepare(delivery, memo) {
      const target = await memo.get(delivery.targetId, () => deps.queries.target(delivery.tenantId, delivery.targetId));
      // Paused or in error: its events are dropped (the audit log keeps them).
      if (!target || target.status !== 'active') return null;
      const config = JSON.parse(deps.secretBox.open(target.sealedConfig)) as AnyLogStreamConfig;
      return destinationRequest(deps, target.type, config, delivery.payload);
    },

    retryDelayMs: (attempt) => fullJitterDelayMs(attempt, deps.retryBaseMs),

    failureThreshold: FAILURES_BEFORE_ERROR,

    async onTargetFailing(delivery, failures) {
      return deps.commands.disableFailing(delivery.tenantId, delivery.targetId, failures, systemContext(delivery.tenantId));
    },
  };
}
