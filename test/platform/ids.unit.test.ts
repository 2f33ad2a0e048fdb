import { describe, expect, it } from 'vitest';
import { v5, v7 } from 'uuid';
import { isUuid, nameBasedId, nameBasedIds, newId } from '../../src/platform/ids.ts';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('newId', () => {
  it('answers UUIDv7s, unique and increasing in creation order across many ids of one millisecond', () => {
    const ids = Array.from({ length: 5_000 }, () => newId());
    expect(ids.every((id) => UUID_V7.test(id) && isUuid(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
  });

  it('has the bits uuid\'s v7() writes for the same milliseconds, sequence and random bytes', () => {
    for (let i = 0; i < 1_000; i += 1) {
      const id = newId();
      const hex = id.replaceAll('-', '');
      const bytes = Uint8Array.from(hex.match(/../g)!.map((pair) => Number.parseInt(pair, 16)));
      const seq = (((bytes[6]! & 0x0f) << 28) | (bytes[7]! << 20) | ((bytes[8]! & 0x3f) << 14) | (bytes[9]! << 6) | (bytes[10]! >>> 2)) >>> 0;
      expect(v7({ msecs: Number.parseInt(hex.slice(0, 12), 16), seq, random: bytes })).toBe(id);
    }
  });

  it('carries the creation time in its first 48 bits', () => {
    const before = Date.now();
    const id = newId();
    const ms = Number.parseInt(id.replace(/-/g, '').slice(0, 12), 16);
    expect(ms).toBeGreaterThanOrEqual(before);
    expect(ms).toBeLessThanOrEqual(Date.now() + 1);
  });
});

describe('nameBasedId', () => {
  it('answers the UUIDv5 of RFC 9562 (as the uuid package computes it) for the namespace and name', () => {
    const names = ['webhooks', 'log-streams', `${newId()}\n${newId()}`, 'naïve ünïcode ✓', ''];
    for (const namespace of [v5.URL, v5.DNS, newId()]) {
      for (const name of names) expect(nameBasedId(namespace, name)).toBe(v5(name, namespace));
    }
  });
});

describe('nameBasedIds', () => {
  it('answers the same ids as nameBasedId call after call, a long name (its buffer grown) between short ones', () => {
    const namespace = newId();
    const ids = nameBasedIds(namespace);
    const names = ['a', `${newId()}\n${newId()}`, 'x'.repeat(1_000), 'ü', '', 'é'.repeat(300), 'b'];
    for (const name of [...names, ...names]) expect(ids(name)).toBe(v5(name, namespace));
  });
});
