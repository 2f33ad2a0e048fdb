import { platformError, type DomainError } from '../errors.ts';
import type { DataSubject } from '../crypto/data-keys.ts';
import type { EventMetadata, RecordedEvent } from '../eventstore/port.ts';
import type { EventDefinition } from './define-event.ts';
import { maskValuePaths, omitValuePaths } from './field-paths.ts';

/** An append of an event the catalogue does not know, or whose data does not fit its schema: a programming error. */
/** What a masked secret reads. */
export const REDACTED = '[REDACTED]';

export const eventSchemaViolation = (message: string): DomainError => platformError('EVENT_SCHEMA_VIOLATION', message);

/** Events written before versions were recorded carry no schemaVersion: they are version 1. */
const versionOf = (event: RecordedEvent): number => event.metadata.schemaVersion ?? 1;

/** Every event type the service may write, with its schema, version, upcasters and sensitive fields. */
export class EventCatalogue {
  private readonly byType = new Map<string, EventDefinition>();

  constructor(
    readonly definitions: readonly EventDefinition[],
    /** The data subject an actor is in a tenant (a user's stream id): whose key seals the request metadata of events naming no person. */
    private readonly actorDataSubject: (metadata: EventMetadata) => string | null = () => null,
  ) {
    for (const definition of definitions) {
      if (this.byType.has(definition.type)) throw new Error(`event type ${definition.type} is defined twice`);
      this.byType.set(definition.type, definition);
    }
  }

  private known(type: string): EventDefinition | undefined {
    return this.byType.get(type);
  }

  /** Whether `type` is an event type of the catalogue. */
  has(type: string): boolean {
    return this.byType.has(type);
  }

  /** The definition `event` must be written with; throws EVENT_SCHEMA_VIOLATION naming the type and the failing path. */
  check(streamId: string, event: { type: string; data: unknown }): EventDefinition {
    const definition = this.known(event.type);
    if (!definition) throw eventSchemaViolation(`Event type ${event.type} (stream ${streamId}) is not in the event catalogue`);
    const result = definition.data.safeParse(event.data);
    if (!result.success) {
      // Paths and zod's messages only: the value may be a secret and never enters an error or a log.
      const issues = result.error.issues.map((issue) => `data${issue.path.map((key) => `.${String(key)}`).join('')}: ${issue.message}`);
      throw eventSchemaViolation(`Event ${event.type} v${definition.version} (stream ${streamId}) does not fit its schema: ${issues.join('; ')}`);
    }
    return definition;
  }

  /** The event in its type's current version (unknown types and current versions unchanged). */
  upcast<Event extends RecordedEvent>(event: Event): Event {
    const definition = this.known(event.type);
    if (!definition || versionOf(event) >= definition.version) return event;
    let data = event.data as Record<string, unknown>;
    for (let version = versionOf(event); version < definition.version; version += 1) data = definition.upcasters[version]!(data);
    return { ...event, data, metadata: { ...event.metadata, schemaVersion: definition.version } };
  }

  /**
   * What of an event's data may leave the service: everything but its sensitive fields. An unknown
   * type throws: nothing whose sensitivity is unknown is published.
   */
  publicData(event: RecordedEvent): unknown {
    return omitValuePaths(event.data, this.sensitivePaths(event));
  }

  /** The event's data for readers inside the service's trust boundary (audit, history): sensitive fields read "[REDACTED]". */
  maskedData(event: RecordedEvent): unknown {
    return maskValuePaths(event.data, this.sensitivePaths(event), REDACTED);
  }

  /** The person whose personal fields `event` carries, and their paths (null when none, or no person). */
  personalDataOf(event: { type: string; data: unknown; metadata: EventMetadata }): { subject: DataSubject; paths: readonly string[] } | null {
    const definition = this.known(event.type);
    if (!definition?.dataSubject) return null;
    const subject = definition.dataSubject(event.data, event.metadata);
    return subject === null ? null : { subject: { tenantId: event.metadata.tenantId, subject }, paths: definition.personal };
  }

  /** The acting person, as a data subject of the event's tenant (null for none). */
  actorDataSubjectOf(metadata: EventMetadata): DataSubject | null {
    const subject = this.actorDataSubject(metadata);
    return subject === null ? null : { tenantId: metadata.tenantId, subject };
  }

  /** The person `event` erases (null for every other event). */
  erasedSubjectOf(event: { type: string; data: unknown; metadata: EventMetadata }): DataSubject | null {
    const subject = this.known(event.type)?.erasesDataSubject?.(event.data, event.metadata) ?? null;
    return subject === null ? null : { tenantId: event.metadata.tenantId, subject };
  }

  private sensitivePaths(event: RecordedEvent): readonly string[] {
    const definition = this.known(event.type);
    if (!definition) throw new Error(`event type ${event.type} (position ${event.position}) is not in the event catalogue: its sensitive fields are unknown`);
    return definition.sensitive;
  }
}
