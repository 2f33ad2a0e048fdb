import { z } from 'zod';
import { defineEvent, type EventOf } from '../../platform/events/define-event.ts';

export const LOG_STREAM_TYPES = ['WEBHOOK', 'OBJECT_STORE', 'LOG_PLATFORM_A', 'LOG_PLATFORM_B'] as const;
export type LogStreamType = (typeof LOG_STREAM_TYPES)[number];
export const LOG_STREAM_STATUSES = ['active', 'paused', 'error'] as const;
export type LogStreamStatus = (typeof LOG_STREAM_STATUSES)[number];

/**
 * A stream's configuration travels twice: `config` with its secret members masked (what reads and
 * the audit show) and `sealedConfig`, the whole configuration sealed by the master key (what a
 * delivery opens). Only the sealed one is sensitive.
 */
const configFields = { config: z.record(z.string(), z.unknown()), sealedConfig: z.string() };

export const logStreamCreated = defineEvent({
  type: 'LogStreamCreated',
  description: 'A log stream; its configuration holds secrets only sealed by the master key.',
  data: z.strictObject({
    logStreamId: z.string(),
    name: z.string(),
    type: z.enum(LOG_STREAM_TYPES),
    ...configFields,
    /** Audit action names forwarded; null forwards all. */
    eventFilters: z.array(z.string()).nullable(),
  }),
  sensitive: ['sealedConfig'],
});
export const logStreamUpdated = defineEvent({
  type: 'LogStreamUpdated',
  description: 'Changed name, configuration or event filters.',
  data: z.strictObject({ logStreamId: z.string(), name: z.string().optional(), ...configFields, eventFilters: z.array(z.string()).nullable() }).partial().required({ logStreamId: true }),
  sensitive: ['sealedConfig'],
});
export const logStreamStatusChanged = defineEvent({
  type: 'LogStreamStatusChanged',
  description: 'Paused or resumed by an administrator, or set to error after consecutive failed deliveries.',
  data: z.strictObject({ logStreamId: z.string(), status: z.enum(LOG_STREAM_STATUSES), consecutiveFailures: z.number().int().optional() }),
});
export const logStreamDeleted = defineEvent({ type: 'LogStreamDeleted', data: z.strictObject({ logStreamId: z.string(), name: z.string() }) });

export const logStreamEvents = [logStreamCreated, logStreamUpdated, logStreamStatusChanged, logStreamDeleted];

export type LogStreamCreated = EventOf<typeof logStreamCreated>;
export type LogStreamUpdated = EventOf<typeof logStreamUpdated>;
export type LogStreamStatusChanged = EventOf<typeof logStreamStatusChanged>;
export type LogStreamDeleted = EventOf<typeof logStreamDeleted>;
export type LogStreamEvent = EventOf<(typeof logStreamEvents)[number]>;

export type LogStreamSettings = Omit<LogStreamCreated['data'], 'logStreamId'>;

export const logStreamStreamId = (tenant: string, id: string): string => `logstream-${tenant}.${id}`;

export const logStreamNameReservation = (tenant: string, name: string, owner: string) => ({ scope: tenant, kind: 'log-stream-name', value: name, owner });
