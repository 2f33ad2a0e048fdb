/**
 * The one redaction table of the service: which event fields never leave it (the relay strips
 * them from what it publishes; the audit log masks them). A field is sensitive by its name, at
 * any depth of the event's data.
 */
const SENSITIVE_FIELDS = new Set([
  'password', // never recorded (only its hash is), listed so a mistake cannot leak it
  'passwordHash', // users: argon2id PHC string
  'refreshTokenHash', // sessions: SHA-256 of the refresh token's secret
  'tokenHash',
  'sealedPrivateKey', // keys: the signing key, sealed by the master key
  'privateKey',
  'secret',
]);

/** Any other name that says what it holds: passwordHash-like digests, secrets, sealed values. */
const SENSITIVE_NAME = /hash|secret|sealed/i;

export function isSensitiveField(name: string): boolean {
  return SENSITIVE_FIELDS.has(name) || SENSITIVE_NAME.test(name);
}

/** A deep copy of `value` without the sensitive fields (arrays and nested objects included). */
export function stripSensitiveFields(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stripSensitiveFields);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([name]) => !isSensitiveField(name))
      .map(([name, field]) => [name, stripSensitiveFields(field)]),
  );
}

export const REDACTED = '[REDACTED]';

/** A deep copy of `value` with every sensitive field that holds something replaced by "[REDACTED]" (audit, history). */
export function maskSensitiveFields(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(maskSensitiveFields);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([name, field]) => [name, isSensitiveField(name) ? (field == null ? field : REDACTED) : maskSensitiveFields(field)]),
  );
}
