import { setTimeout as sleep } from 'node:timers/promises';

const FIRST_DELAY_MS = 100;
const MAX_DELAY_MS = 5000;

/**
 * Waits before a failed batch is delivered again: 100 ms doubling up to 5 s, so a transient failure
 * is retried quickly and a persistent one does not spin. Returns early when `signal` aborts.
 */
export async function waitBeforeRedelivery(attempt: number, signal: AbortSignal): Promise<void> {
  const delayMs = Math.min(FIRST_DELAY_MS * 2 ** (attempt - 1), MAX_DELAY_MS);
  await sleep(delayMs, undefined, { signal }).catch(() => undefined);
}
