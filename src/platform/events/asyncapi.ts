import { z } from 'zod';
import { publicEventSchema } from '../bus/public-event.ts';
import type { EventCatalogue } from './catalogue.ts';
import type { EventDefinition } from './define-event.ts';
import { omitSchemaPaths, type JsonSchema } from './field-paths.ts';

export interface EventsDocumentOptions {
  title: string;
  version: string;
  /** The topic the relay publishes to (KAFKA_TOPIC). */
  topic: string;
}

const CHANNEL = 'events';

/** The relay's message headers (relay.ts). */
const headers = (type: string): JsonSchema => ({
  type: 'object',
  required: ['content-type', 'event-id', 'event-type', 'tenant-id'],
  properties: {
    'content-type': { type: 'string', const: 'application/json' },
    'event-id': { type: 'string', description: 'The event id (UUIDv7): consumers deduplicate by it.' },
    'event-type': { type: 'string', const: type },
    'tenant-id': { type: 'string' },
  },
});

/** Recursive schemas refer to their own `definitions`; in the document they live under components.schemas. */
function relocateDefinitions(type: string, schema: JsonSchema, components: Record<string, JsonSchema>): JsonSchema {
  const { $schema: _dialect, definitions = {}, ...rest } = schema as JsonSchema & { definitions?: Record<string, JsonSchema> };
  const rename = (name: string) => `${type}.${name}`;
  const relocate = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(relocate);
    if (node === null || typeof node !== 'object') return node;
    return Object.fromEntries(
      Object.entries(node).map(([key, value]) =>
        key === '$ref' && typeof value === 'string' && value.startsWith('#/definitions/')
          ? [key, `#/components/schemas/${rename(value.slice('#/definitions/'.length))}`]
          : [key, relocate(value)],
      ),
    );
  };
  for (const [name, definition] of Object.entries(definitions)) components[rename(name)] = relocate(definition) as JsonSchema;
  return relocate(rest) as JsonSchema;
}

function describe(definition: EventDefinition): string {
  const lines = [definition.description || `The event ${definition.type}.`, `Schema version ${definition.version}.`];
  lines.push(
    definition.sensitive.length > 0
      ? `Redacted: ${definition.sensitive.join(', ')} never leave the service and are absent from data.`
      : 'Nothing is redacted from data.',
  );
  if (definition.personal.length > 0) lines.push(`Personal data: ${definition.personal.join(', ')}.`);
  return lines.join(' ');
}

/**
 * The AsyncAPI 3.0 document of the relayed events: one channel (the topic), one message per event
 * type whose payload is the public envelope with the event's data schema minus its sensitive fields.
 */
export function eventsDocument(catalogue: EventCatalogue, options: EventsDocumentOptions): JsonSchema {
  const envelope = z.toJSONSchema(publicEventSchema, { target: 'draft-7' }) as JsonSchema & { properties: Record<string, JsonSchema> };
  const schemas: Record<string, JsonSchema> = {};
  const messages = Object.fromEntries(
    catalogue.definitions.map((definition) => {
      const data = relocateDefinitions(definition.type, omitSchemaPaths(definition.jsonSchema, definition.sensitive), schemas);
      const { $schema: _dialect, ...envelopeSchema } = envelope;
      const payload = {
        ...envelopeSchema,
        properties: { ...envelope.properties, type: { type: 'string', const: definition.type }, data },
      };
      const message = {
        name: definition.type,
        title: definition.type,
        description: describe(definition),
        contentType: 'application/json',
        headers: headers(definition.type),
        payload,
      };
      return [definition.type, message];
    }),
  );
  const messageRefs = Object.keys(messages).map((type) => ({ $ref: `#/channels/${CHANNEL}/messages/${type}` }));
  return {
    asyncapi: '3.0.0',
    info: {
      title: options.title,
      version: options.version,
      description: 'Every committed event, published in log order by the relay (at least once: deduplicate by id). Sensitive fields are removed before publishing.',
    },
    defaultContentType: 'application/json',
    channels: {
      [CHANNEL]: {
        address: options.topic,
        description: 'Messages are keyed by stream id: the events of a stream share a partition, in order.',
        messages: Object.fromEntries(Object.keys(messages).map((type) => [type, { $ref: `#/components/messages/${type}` }])),
      },
    },
    operations: {
      publishEvents: { action: 'send', channel: { $ref: `#/channels/${CHANNEL}` }, summary: 'The relay publishes each committed event', messages: messageRefs },
    },
    components: { messages, schemas },
  };
}
