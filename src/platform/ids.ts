import { randomFillSync } from 'node:crypto';

// uuid's own v7() draws its 16 random bytes through WebCrypto on every call (about 5 µs, more than
// the rest of an FGA check's audit entry); here they come from a pool refilled 256 ids at a time.
const POOLED_IDS = 256;
const randomPool = new Uint8Array(16 * POOLED_IDS);
let pooledUsed = POOLED_IDS;
// Ids of one millisecond stay in creation order: a counter seeded at random, as uuid's v7() does.
let lastMs = -Infinity;
let sequence = 0;
/** The text of lastMs's 48 bits, `xxxxxxxx-xxxx-`, made once per millisecond. */
let timeText = '';
const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));

/**
 * Time-ordered identifiers (UUIDv7) for aggregates and events; increasing within this process.
 * The bits are uuid's v7() with a sequence (RFC 9562, method 1: 48-bit milliseconds, a 32-bit
 * counter over rand_a and rand_b, 42 random bits), written straight as text: an FGA check's audit
 * entry makes one, and uuid's options, byte array and stringify cost more than the bits.
 */
export function newId(): string {
  if (pooledUsed === POOLED_IDS) {
    randomFillSync(randomPool);
    pooledUsed = 0;
  }
  const at = 16 * pooledUsed++;
  const now = Date.now();
  if (now > lastMs) {
    lastMs = now;
    sequence = (((randomPool[at + 6]! & 0x7f) << 24) | (randomPool[at + 7]! << 16) | (randomPool[at + 8]! << 8) | randomPool[at + 9]!) >>> 0;
    timeText = '';
  } else {
    sequence = (sequence + 1) >>> 0;
    if (sequence === 0) {
      lastMs += 1;
      timeText = '';
    }
  }
  if (timeText === '') {
    const ms = lastMs.toString(16).padStart(12, '0');
    timeText = `${ms.slice(0, 8)}-${ms.slice(8)}-`;
  }
  const seq = sequence;
  return (
    timeText +
    HEX[0x70 | (seq >>> 28)]! +
    HEX[(seq >>> 20) & 0xff]! +
    '-' +
    HEX[0x80 | ((seq >>> 14) & 0x3f)]! +
    HEX[(seq >>> 6) & 0xff]! +
    '-' +
    HEX[((seq << 2) & 0xff) | (randomPool[at + 10]! & 0x03)]! +
    HEX[randomPool[at + 11]!]! +
    HEX[randomPool[at + 12]!]! +
    HEX[randomPool[at + 13]!]! +
    HEX[randomPool[at + 14]!]! +
    HEX[randomPool[at + 15]!]!
  );
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether a caller-supplied id can be a UUID: anything else names nothing (404, never a SQL cast error). */
export function isUuid(id: string): boolean {
  return UUID.test(id);
}

/**
 * Name-based identifiers (UUIDv5, RFC 9562: SHA-1 of the namespace's bytes and the name) in one
 * namespace: the same for the same namespace and name wherever they are computed. The namespace's
 * bytes are decoded once and the name is written after them into a buffer kept for the next call,
 * then hashed by `sha1` below: a webhook delivery's id is computed once per delivery, at thousands a
 * second, and node's one-shot `hash` took 2.9 to 4.7 µs a call (OpenSSL looks the digest up by name
 * at each call), 6.4% of the webhooks consumer's event loop (docs/performance.md, "Outbound delivery
 * (session 16, webhooks)"). SHA-1 serves here as the RFC's naming function, not as a security check.
 */
export function nameBasedIds(namespace: string): (name: string) => string {
  let scratch = Buffer.alloc(256);
  Buffer.from(namespace.replaceAll('-', ''), 'hex').copy(scratch);
  return (name) => {
    // ASCII names (ids, as in the deliveries' names) are copied here; others encoded by Buffer.
    let length = 16 + name.length;
    if (length > scratch.length) {
      const larger = Buffer.alloc(2 * (16 + Buffer.byteLength(name, 'utf8')));
      scratch.copy(larger, 0, 0, 16);
      scratch = larger;
    }
    for (let i = 0; i < name.length; i++) {
      const code = name.charCodeAt(i);
      if (code >= 0x80) {
        length = 16 + Buffer.byteLength(name, 'utf8');
        if (length > scratch.length) {
          const larger = Buffer.alloc(2 * length);
          scratch.copy(larger, 0, 0, 16);
          scratch = larger;
        }
        scratch.write(name, 16, 'utf8');
        break;
      }
      scratch[16 + i] = code;
    }
    sha1(scratch, length);
    const [a, b, c, d] = [sha1State[0]!, sha1State[1]!, sha1State[2]!, sha1State[3]!];
    return (
      HEX[a >>> 24]! + HEX[(a >>> 16) & 0xff]! + HEX[(a >>> 8) & 0xff]! + HEX[a & 0xff]! + '-' +
      HEX[b >>> 24]! + HEX[(b >>> 16) & 0xff]! + '-' +
      HEX[0x50 | ((b >>> 8) & 0x0f)]! + HEX[b & 0xff]! + '-' +
      HEX[0x80 | ((c >>> 24) & 0x3f)]! + HEX[(c >>> 16) & 0xff]! + '-' +
      HEX[(c >>> 8) & 0xff]! + HEX[c & 0xff]! + HEX[d >>> 24]! + HEX[(d >>> 16) & 0xff]! + HEX[(d >>> 8) & 0xff]! + HEX[d & 0xff]!
    );
  };
}

/**
 * SHA-1's state (FIPS 180-4), its message schedule, and the padded last block(s) of a message. Int32
 * arithmetic throughout (`| 0`): V8 keeps such values unboxed, where uint32 ones above 2^31 are doubles.
 */
const sha1State = new Int32Array(5);
const sha1Words = new Int32Array(80);
const sha1Tail = new Uint8Array(128);

/** The SHA-1 of `bytes[0, length)`, left in sha1State (five big-endian words). */
function sha1(bytes: Uint8Array, length: number): void {
  sha1State[0] = 0x67452301;
  sha1State[1] = 0xefcdab89 | 0;
  sha1State[2] = 0x98badcfe | 0;
  sha1State[3] = 0x10325476;
  sha1State[4] = 0xc3d2e1f0 | 0;
  const whole = length - (length % 64);
  for (let offset = 0; offset < whole; offset += 64) sha1Block(bytes, offset);
  const rest = length - whole;
  sha1Tail.fill(0);
  sha1Tail.set(bytes.subarray(whole, length));
  sha1Tail[rest] = 0x80;
  const end = rest + 9 > 64 ? 128 : 64;
  const bits = length * 8;
  const high = Math.floor(bits / 0x100000000);
  sha1Tail[end - 8] = high >>> 24;
  sha1Tail[end - 7] = high >>> 16;
  sha1Tail[end - 6] = high >>> 8;
  sha1Tail[end - 5] = high;
  sha1Tail[end - 4] = bits >>> 24;
  sha1Tail[end - 3] = bits >>> 16;
  sha1Tail[end - 2] = bits >>> 8;
  sha1Tail[end - 1] = bits;
  sha1Block(sha1Tail, 0);
  if (end === 128) sha1Block(sha1Tail, 64);
}

function sha1Block(data: Uint8Array, offset: number): void {
  const w = sha1Words;
  for (let i = 0; i < 16; i++) {
    const at = offset + 4 * i;
    w[i] = (data[at]! << 24) | (data[at + 1]! << 16) | (data[at + 2]! << 8) | data[at + 3]!;
  }
  for (let i = 16; i < 80; i++) {
    const x = w[i - 3]! ^ w[i - 8]! ^ w[i - 14]! ^ w[i - 16]!;
    w[i] = (x << 1) | (x >>> 31);
  }
  let a = sha1State[0]!;
  let b = sha1State[1]!;
  let c = sha1State[2]!;
  let d = sha1State[3]!;
  let e = sha1State[4]!;
  let t = 0;
  let i = 0;
  // A loop per round function, each on one line: a choice of function inside one loop, or a step
  // function over shared variables, made the block 2.5 times slower.
  for (; i < 20; i++) (t = (((a << 5) | (a >>> 27)) + ((b & c) | (~b & d)) + e + w[i]! + 0x5a827999) | 0), (e = d), (d = c), (c = (b << 30) | (b >>> 2)), (b = a), (a = t);
  for (; i < 40; i++) (t = (((a << 5) | (a >>> 27)) + (b ^ c ^ d) + e + w[i]! + 0x6ed9eba1) | 0), (e = d), (d = c), (c = (b << 30) | (b >>> 2)), (b = a), (a = t);
  for (; i < 60; i++) (t = (((a << 5) | (a >>> 27)) + ((b & c) | (b & d) | (c & d)) + e + w[i]! - 0x70e44324) | 0), (e = d), (d = c), (c = (b << 30) | (b >>> 2)), (b = a), (a = t);
  for (; i < 80; i++) (t = (((a << 5) | (a >>> 27)) + (b ^ c ^ d) + e + w[i]! - 0x359d3e2a) | 0), (e = d), (d = c), (c = (b << 30) | (b >>> 2)), (b = a), (a = t);
  sha1State[0] = (sha1State[0]! + a) | 0;
  sha1State[1] = (sha1State[1]! + b) | 0;
  sha1State[2] = (sha1State[2]! + c) | 0;
  sha1State[3] = (sha1State[3]! + d) | 0;
  sha1State[4] = (sha1State[4]! + e) | 0;
}

/** One name-based identifier (UUIDv5); `nameBasedIds` for many in one namespace. */
export function nameBasedId(namespace: string, name: string): string {
  return nameBasedIds(namespace)(name);
}
