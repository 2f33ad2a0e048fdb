import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { eventCatalogue } from '../src/event-catalogue.ts';
import { defineEvent, type EventDefinition } from '../src/platform/events/define-event.ts';
import { schemaFields } from '../src/platform/events/field-paths.ts';

/** A field whose name says it may hold a credential. */
const SECRET_LIKE = /password|hash|secret|sealed|token/i;

/** Fields whose names look secret but hold none, each a reviewed decision (`Type:path`). */
const NOT_SECRET = new Set([
  'SessionStarted:refreshTokenLifetimeSeconds', // a duration
  'EmailLinkIssued:passwordVersion', // a counter of password changes
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
