import { z } from 'zod';
import type { LogStreamType } from './events.ts';

/** What reads show in place of a secret member (decisions.md, Log streams). */
export const MASK = '********';

const httpsUrl = z
  .url()
  .max(2048)
  .refine((url) => url.toLowerCase().startsWith('https://'), 'must be an https URL');
const text = z.string().trim().min(1).max(256);
const secret = z.string().min(1).max(4096);

export const PLATFORM_A_REGIONS = ['us1', 'us3', 'us5', 'eu1', 'ap1'] as const;

/** Each type's configuration (spec, Log streams; decisions.md adds endpoint and forcePathStyle). */
export const configSchemas = {
  WEBHOOK: z.strictObject({
    url: httpsUrl,
    headers: z
      .record(z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$/, 'not a header name'), z.string().max(8192).regex(/^[^\r\n\0]*$/, 'no line breaks'))
      .refine((headers) => Object.keys(headers).length <= 50, 'at most 50 headers')
      .optional(),
  }),
  OBJECT_STORE: z.strictObject({
    bucket: text,
    region: text,
    accessKeyId: text,
    secretAccessKey: secret,
    prefix: z.string().max(512).optional(),
    endpoint: httpsUrl.optional(),
    forcePathStyle: z.boolean().optional(),
  }),
  LOG_PLATFORM_A: z.strictObject({ apiKey: secret, region: z.enum(PLATFORM_A_REGIONS), service: text.optional(), source: text.optional() }),
  LOG_PLATFORM_B: z.strictObject({ hecUrl: httpsUrl, hecToken: secret, index: text.optional(), source: text.optional(), sourcetype: text.optional() }),
} satisfies Record<LogStreamType, z.ZodType>;

export type LogStreamConfig = { [T in LogStreamType]: z.infer<(typeof configSchemas)[T]> };
export type AnyLogStreamConfig = LogStreamConfig[LogStreamType];

const SECRET_MEMBERS = new Set(['secretAccessKey', 'apiKey', 'hecToken']);
const isSecretHeader = (name: string) => /^authorization$|token|key|secret/i.test(name);

/** The configuration as every read shows it: secret members and credential-like headers masked, keys kept. */
export function maskedConfig(config: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(config).map(([key, value]) => {
      if (SECRET_MEMBERS.has(key)) return [key, MASK];
      if (key === 'headers' && value && typeof value === 'object') {
        return [key, Object.fromEntries(Object.entries(value).map(([name, header]) => [name, isSecretHeader(name) ? MASK : header]))];
      }
      return [key, value];
    }),
  );
}

/**
 * A configuration sent back as read (masked) keeps the stored secrets: a member (or header) whose
 * value is the mask takes the stored value, so an update need not repeat them.
 */
export function withStoredSecrets(next: Record<string, unknown>, stored: Record<string, unknown>): Record<string, unknown> {
  const merged = Object.fromEntries(Object.entries(next).map(([key, value]) => [key, value === MASK && SECRET_MEMBERS.has(key) ? stored[key] : value]));
  const headers = merged.headers as Record<string, string> | undefined;
  const storedHeaders = (stored.headers ?? {}) as Record<string, string>;
  if (headers) merged.headers = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, value === MASK ? storedHeaders[name] : value]));
  return merged;
}
