import { z } from 'zod';

/** Shared request schemas: paging of the spec's Limits, and ids in paths. */
export const pageQuery = (maxLimit = 100, defaultLimit = 20) => ({
  page: z.coerce.number().int().min(1).max(1_000_000).default(1),
  limit: z.coerce.number().int().min(1).max(maxLimit).default(defaultLimit),
});

export const idParams = z.object({ id: z.string().min(1).max(100) });

/** An ISO 8601 instant with Z or an offset (never a local time left to guess), as a Date. */
export const instantQuery = z.iso.datetime({ offset: true }).transform((text) => new Date(text));
