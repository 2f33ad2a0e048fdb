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
