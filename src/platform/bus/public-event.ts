import { z } from 'zod';
import type { RecordedEvent } from '../eventstore/port.ts';
import type { PublicEvent } from './port.ts';

const decimal = z.string().regex(/^\d+$/, 'a non-negative decimal integer');
const optionalText = z.string().nullish();

export const publicEventSchema: z.ZodType<PublicEvent> = z.object({
  version: z.literal(1),
  id: z.string().min(1),
  type: z.string().min(1),
  tenantId: z.string().min(1),
  streamId: z.string().min(1),
  revision: decimal,
  position: decimal,
  occurredAt: z.string().min(1),
  data: z.unknown(),
  metadata: z.object({
    tenantId: z.string(),
    actor: z.string(),
    clientIp: optionalText,
    userAgent: optionalText,
    correlationId: optionalText,
    causationId: optionalText,
    occurredAt: z.string(),
    schemaVersion: z.number().int().positive().optional(),
  }),
});

/**
 * The envelope of a recorded event, with `data` (the relay's: sensitive fields stripped) in place
 * of its own. Redaction of sensitive fields is the relay's job, before this.
 */
export function toPublicEvent(event: RecordedEvent, data: unknown = event.data): PublicEvent {
  return {
    version: 1,
    id: event.id,
    type: event.type,
    tenantId: event.metadata.tenantId,
    streamId: event.streamId,
    revision: event.revision.toString(),
    position: event.position.toString(),
    occurredAt: event.metadata.occurredAt,
    data,
    metadata: event.metadata,
  };
}

/** Validates before it serialises, so a malformed event fails the publish, not every consumer. */
export function encodePublicEvent(event: PublicEvent): string {
  return JSON.stringify(publicEventSchema.parse(event));
}

/**
 * Throws on anything that is not a version-1 envelope. The Kafka adapter decodes inside the delivery
 * attempt: a foreign message blocks its partition (and shows as lag) instead of being skipped unseen.
 * (The in-process bus only parses: its topics hold nothing but what its publish encoded.)
 */
export function decodePublicEvent(payload: string): PublicEvent {
  return publicEventSchema.parse(JSON.parse(payload));
}
