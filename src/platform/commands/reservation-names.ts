import { createHmac, hkdfSync } from 'node:crypto';

const CATEGORY = 'reservation';
/** Marks a keyed name (and its derivation version) in the stream id. */
const KEYED = 'k1-';

/** The stream ids a reservation of `value` may live in: the keyed one new claims use, and the clear-text one of older data. */
export interface ReservationStreams {
  keyed: string;
  legacy: string;
}

/**
 * Names reservation streams without the reserved value in clear (an e-mail would otherwise stay in
 * the log's stream ids after the person's erasure, docs/erasure.md): HMAC-SHA256 under a key derived
 * from the master key, over scope, kind and the lower-cased value. Keyed, not a plain hash, so a
 * list of e-mails cannot be hashed and matched against the log without the master key. Values
 * reserved before keyed names existed live under `reservation-<scope>.<kind>.<value>`; the
 * reservation functions read both names.
 */
export class ReservationNames {
  private readonly key: Buffer;

  constructor(masterKey: string) {
    this.key = Buffer.from(hkdfSync('sha256', masterKey, '', 'iam reservation stream names v1', 32));
  }

  streamsOf(scope: string, kind: string, value: string): ReservationStreams {
    const normalized = value.toLowerCase();
    const mac = createHmac('sha256', this.key).update(`${scope}\u0000${kind}\u0000${normalized}`, 'utf8').digest('base64url');
    return { keyed: `${CATEGORY}-${scope}.${kind}.${KEYED}${mac}`, legacy: `${CATEGORY}-${scope}.${kind}.${normalized}` };
  }

  /** The kind of a reservation stream id, either form (null for any other stream). */
  static kindOf(streamId: string): string | null {
    return streamId.startsWith(`${CATEGORY}-`) ? (streamId.split('.')[1] ?? null) : null;
  }
}
