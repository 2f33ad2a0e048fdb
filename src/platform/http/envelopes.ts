import { z, type ZodType } from 'zod';
import type { ErrorDetail } from '../errors.ts';

/**
 * Every response shape of the spec, in one place. Routes name the shape they answer with:
 * canonical `{ok, data}`, legacy `{success, data}`, flat objects and the v1 layer.
 */
export interface Pagination {
  page: number;
  limit: number;
  total: number;
  totalPages: number;
}

export const ok = <T>(data: T) => ({ ok: true as const, data });

export const success = <T>(data: T) => ({ success: true as const, data });

export const successOnly = () => ({ success: true as const });

export function pagination(page: number, limit: number, total: number): Pagination {
  return { page, limit, total, totalPages: Math.ceil(total / limit) };
}

/** The canonical list: `{ok: true, data: {data: [...], pagination}}`. */
export const okList = <T>(items: T[], page: Pagination) => ok({ data: items, pagination: page });

/** The v1 layer's list: `{ok, data: [...], pagination: {page, pageSize, total, totalPages}}`. */
export const v1List = <T>(items: T[], page: number, pageSize: number, total: number) => ({
  ok: true as const,
  data: items,
  pagination: { page, pageSize, total, totalPages: pageSize === 0 ? 1 : Math.max(1, Math.ceil(total / pageSize)) },
});

/** Error envelopes by route family. */
export type ErrorEnvelope = 'canonical' | 'success' | 'bare' | 'v1' | 'oauth';

export function errorBody(envelope: ErrorEnvelope, code: string, message: string, details?: ErrorDetail[]) {
  switch (envelope) {
    case 'canonical':
      return { ok: false as const, error: { code, message, ...(details ? { details } : {}) } };
    case 'v1':
      return { ok: false as const, error: { code, message, details: details ?? [] } };
    case 'success':
      return { success: false as const, error: { code, message, ...(details ? { details } : {}) } };
    case 'bare':
      return { error: message };
    case 'oauth': {
      // RFC 6749 section 5.2: our own failures (validation, tenant) map to invalid_request.
      const oauthCode = /^[a-z_]+$/.test(code) ? code : 'invalid_request';
      return { error: oauthCode, error_description: message };
    }
  }
}

// The same shapes as zod schemas: what routes declare as their responses (and OpenAPI documents).

const paginationSchema = z.object({ page: z.number().int(), limit: z.number().int(), total: z.number().int(), totalPages: z.number().int() });
export { paginationSchema };

export const okBody = <T extends ZodType>(data: T) => z.object({ ok: z.literal(true), data });
export const successBody = <T extends ZodType>(data: T) => z.object({ success: z.literal(true), data });
export const successOnlyBody = z.object({ success: z.literal(true) });
export const okListBody = <T extends ZodType>(item: T) => okBody(z.object({ data: z.array(item), pagination: paginationSchema }));
export const v1ListBody = <T extends ZodType>(item: T) =>
  z.object({
    ok: z.literal(true),
    data: z.array(item),
    pagination: z.object({ page: z.number().int(), pageSize: z.number().int(), total: z.number().int(), totalPages: z.number().int() }),
  });

const detailsSchema = z.array(z.object({ path: z.string(), message: z.string() }));
const errorObject = (details: ZodType) => z.object({ code: z.string(), message: z.string(), details });

/** The error body of each route family. */
export const errorBodySchemas: Record<ErrorEnvelope, ZodType> = {
  canonical: z.object({ ok: z.literal(false), error: errorObject(detailsSchema.optional()) }),
  v1: z.object({ ok: z.literal(false), error: errorObject(detailsSchema) }),
  success: z.object({ success: z.literal(false), error: errorObject(detailsSchema.optional()) }),
  bare: z.object({ error: z.string() }),
  oauth: z.object({ error: z.string().describe('RFC 6749 error code'), error_description: z.string() }),
};
