import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import asyncapiSpecs from '@asyncapi/specs';
import { Ajv } from 'ajv';
import formats from 'ajv-formats';
import { eventCatalogue, publicEventData } from '../src/event-catalogue.ts';
import { toPublicEvent } from '../src/platform/bus/public-event.ts';
import { eventsDocument } from '../src/platform/events/asyncapi.ts';
import { defineEvent, type EventDefinition } from '../src/platform/events/define-event.ts';
import { schemaFields } from '../src/platform/events/field-paths.ts';

/** A field whose name says it may hold a credential. */
const SECRET_LIKE = /password|hash|secret|sealed|token/i;

/** Fields whose names look secret but hold none, each a reviewed decision (`Type:path`). */
const NOT_SECRET = new Set([
  'SessionStarted:refreshTokenLifetimeSeconds', // a duration
  'EmailLinkIssued:passwordVersion', // a counter of password changes
  'SessionStarted:passwordVersion', // the same counter, as the session's sign-in saw it
  'WebhookSecretRotated:previousSecretExpiresAt', // an instant
  'SecuritySettingsUpdated:changes.accessTokenExpiry', // settings: durations, lengths, flags and counts
  'SecuritySettingsUpdated:changes.refreshTokenExpiry',
  'SecuritySettingsUpdated:changes.passwordMinLength',
  'SecuritySettingsUpdated:changes.passwordRequireUppercase',
  'SecuritySettingsUpdated:changes.passwordRequireLowercase',
  'SecuritySettingsUpdated:changes.passwordRequireNumbers',
  'SecuritySettingsUpdated:changes.passwordRequireSpecial',
  'SecuritySettingsUpdated:changes.passwordHistoryCount',
]);

/** Secret-looking fields neither declared sensitive nor reviewed as harmless. */
function undeclaredSecretFields(definitions: readonly EventDefinition[]): string[] {
  return definitions.flatMap((definition) =>
    schemaFields(definition.jsonSchema)
      .filter((field) => SECRET_LIKE.test(field.path.split('.').at(-1)!))
      .filter((field) => !definition.sensitive.includes(field.path) && !NOT_SECRET.has(`${definition.type}:${field.path}`))
      .map((field) => `${definition.type}:${field.path}`),
  );
}

describe('the event catalogue', () => {
  it('declares sensitive every field whose name looks like a credential, unless reviewed as harmless', () => {
    expect(undeclaredSecretFields(eventCatalogue.definitions)).toEqual([]);
    const forgotten = defineEvent({ type: 'ApiKeyIssued', data: z.strictObject({ keyId: z.string(), keys: z.array(z.strictObject({ apiSecret: z.string() })) }) });
    expect(undeclaredSecretFields([forgotten])).toEqual(['ApiKeyIssued:keys[].apiSecret']);
  });

  it('lists every reviewed exception against a real field (no stale entry)', () => {
    const fields = new Set(eventCatalogue.definitions.flatMap((d) => schemaFields(d.jsonSchema).map((field) => `${d.type}:${field.path}`)));
    expect([...NOT_SECRET].filter((entry) => !fields.has(entry))).toEqual([]);
  });
});

// Compiling the official AsyncAPI schema is CPU-bound: several seconds on a loaded 2-core machine.
describe('the AsyncAPI document of the bus', { timeout: 60_000 }, () => {
  const document = eventsDocument(eventCatalogue, { title: 'IAM service events', version: '0.1.0', topic: 'iam.events' }) as any;
  const ajv = new Ajv({ strict: false, allErrors: true, logger: false });
  formats.default(ajv);

  it('is a valid AsyncAPI 3.0.0 document (official JSON Schema)', () => {
    const validate = ajv.compile(asyncapiSpecs.schemasWithoutId['3.0.0']);
    expect(validate(document), JSON.stringify(validate.errors)).toBe(true);
    expect(validate({ ...document, operations: { publishEvents: { action: 'publish' } } })).toBe(false);
  });

  it('describes every catalogue event on the topic, with a payload that accepts what the relay publishes', () => {
    expect(document.channels.events.address).toBe('iam.events');
    expect(Object.keys(document.channels.events.messages).sort()).toEqual(eventCatalogue.definitions.map((d) => d.type).sort());
    ajv.addSchema(document, 'asyncapi');
    const payload = ajv.getSchema('asyncapi#/components/messages/UserCreated/payload')!;
    const data = { userId: 'u1', email: 'ada@acme.test', username: null, firstName: 'Ada', lastName: null, enabled: true, emailVerified: false, passwordHash: '$argon2id$...', roles: [], origin: 'signup' };
    const event = { id: 'e1', type: 'UserCreated', streamId: 'user-acme.u1', revision: 0n, position: 7n, data, metadata: { tenantId: 'acme', actor: 'system', occurredAt: '2026-01-01T00:00:00.000Z', schemaVersion: 2 } };
    const published = toPublicEvent({ ...event, data: publicEventData(event) });
    expect(payload(published), JSON.stringify(payload.errors)).toBe(true);
    expect(payload(toPublicEvent(event))).toBe(false);
    expect(document.components.messages.UserCreated.description).toContain('Redacted: passwordHash');
  });

  it('shows no sensitive field of any event', () => {
    const text = JSON.stringify(document);
    const sensitiveNames = new Set(eventCatalogue.definitions.flatMap((d) => d.sensitive.map((path) => path.split('.').at(-1)!)));
    expect(sensitiveNames.size).toBeGreaterThan(0);
    for (const name of sensitiveNames) expect(text).not.toContain(`"${name}":`);
  });
});
