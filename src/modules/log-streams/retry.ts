/** Attempts of one delivery (spec, Log stream delivery): the first and 7 retries. */
export const MAX_ATTEMPTS = 8;
/** The longest wait between two attempts: 6 hours. */
export const RETRY_CAP_MS = 6 * 60 * 60 * 1000;

/**
 * Exponential backoff with full jitter: after failed attempt n, a wait drawn uniformly from
 * [0, min(cap, base * 2^(n-1))]; null once MAX_ATTEMPTS were made. `random` is injectable for tests.
 */
export function fullJitterDelayMs(attempt: number, baseMs: number, random: () => number = Math.random): number | null {
  if (attempt >= MAX_ATTEMPTS) return null;
  return Math.floor(random() * Math.min(RETRY_CAP_MS, baseMs * 2 ** (attempt - 1)));
}
