import {
  isSystemStream,
  START,
  type JSONEventData,
  type JSONType,
  type RecordedEvent as KurrentRecordedEvent,
  type ReadPosition,
} from '@kurrent/kurrentdb-client';
import type { EventMetadata, NewEvent, RecordedEvent } from './port.ts';

/**
 * Our event as KurrentDB event data. Our id becomes the KurrentDB event id, which is what the
 * server deduplicates re-appends on.
 */
export function toEventData(event: NewEvent): JSONEventData {
  return {
    id: event.id,
    contentType: 'application/json',
    type: event.type,
    data: (event.data ?? null) as JSONType,
    metadata: toKurrentMetadata(event.metadata),
  };
}

/**
 * multiStreamAppend takes metadata only as string values, so unset fields are left out and the
 * schema version travels as a string; both append paths store the same shape.
 */
function toKurrentMetadata(metadata: EventMetadata): Record<string, string> {
  const { schemaVersion, ...text } = metadata;
  const strings = Object.entries(text).filter((entry): entry is [string, string] => typeof entry[1] === 'string');
  return Object.fromEntries(schemaVersion === undefined ? strings : [...strings, ['schemaVersion', String(schemaVersion)]]);
}

/** `$`-prefixed keys are KurrentDB's own: multi-stream appends add `$schema.*` and `$record.*`. */
function fromKurrentMetadata(metadata: unknown): EventMetadata {
  const ours = Object.entries(metadata ?? {})
    .filter(([key]) => !key.startsWith('$'))
    .map(([key, value]) => (key === 'schemaVersion' ? [key, Number(value)] : [key, value]));
  return Object.fromEntries(ours) as unknown as EventMetadata;
}

/**
 * KurrentDB writes every event as its own committed log record, so its commit and prepare
 * positions are equal and the commit position alone identifies it in $all.
 */
export function commitPositionOf(event: KurrentRecordedEvent): bigint {
  if (!event.position) throw new Error(`KurrentDB returned event ${event.id} without its log position (servers before 22.6 omit it)`);
  return event.position.commit;
}

export function toRecorded(event: KurrentRecordedEvent): RecordedEvent {
  return {
    id: event.id,
    streamId: event.streamId,
    revision: event.revision,
    position: commitPositionOf(event),
    type: event.type,
    data: event.data,
    metadata: fromKurrentMetadata(event.metadata),
  };
}

/** Neither a system event type nor in a system stream. */
export function isUserEvent(event: RecordedEvent): boolean {
  return !event.type.startsWith('$') && !isSystemStream(event.streamId);
}

/** The $all position to read from for "after `position`"; it may include that event itself. */
export function readPositionAt(position: bigint | undefined): ReadPosition {
  return position === undefined ? START : { commit: position, prepare: position };
}
