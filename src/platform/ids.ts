import { randomFillSync } from 'node:crypto';
import { v7 } from 'uuid';

// uuid's own v7() draws its 16 random bytes through WebCrypto on every call (about 5 µs, more than
// the rest of an FGA check's audit entry); here they come from a pool refilled 256 ids at a time.
const POOLED_IDS = 256;
const randomPool = new Uint8Array(16 * POOLED_IDS);
let pooledUsed = POOLED_IDS;
// Ids of one millisecond stay in creation order: a counter seeded at random, as uuid's v7() does.
let lastMs = -Infinity;
let sequence = 0;

/** Time-ordered identifiers (UUIDv7) for aggregates and events; increasing within this process. */
export function newId(): string {
  if (pooledUsed === POOLED_IDS) {
    randomFillSync(randomPool);
    pooledUsed = 0;
  }
  const random = randomPool.subarray(16 * pooledUsed, 16 * ++pooledUsed);
  const now = Date.now();
  if (now > lastMs) {
    lastMs = now;
    sequence = (((random[6]! & 0x7f) << 24) | (random[7]! << 16) | (random[8]! << 8) | random[9]!) >>> 0;
  } else {
    sequence = (sequence + 1) >>> 0;
    if (sequence === 0) lastMs += 1;
  }
  return v7({ msecs: lastMs, seq: sequence, random });
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether a caller-supplied id can be a UUID: anything else names nothing (404, never a SQL cast error). */
export function isUuid(id: string): boolean {
  return UUID.test(id);
}
