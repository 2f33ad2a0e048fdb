import { describe, expect, it } from 'vitest';
import { jsonArrayChunks } from '../../../src/platform/http/streamed-json.ts';

describe('jsonArrayChunks', () => {
  const document = (items: unknown[]) => ({ ok: true, data: { items, total: items.length } });
  const streamed = (items: unknown[], perChunk: number) =>
    [...jsonArrayChunks('{"ok":true,"data":{"items":', items, `,"total":${items.length}}}`, perChunk)];

  it('writes exactly the text JSON.stringify makes of the whole document, whatever the chunk boundaries', () => {
    for (const count of [0, 1, 2, 3, 4, 7]) {
      const items = Array.from({ length: count }, (_, i) => (i % 2 ? `id-"${i}"` : { n: i }));
      expect(streamed(items, 3).join('')).toBe(JSON.stringify(document(items)));
    }
  });

  it('yields the opening, one string per chunk of items, then the closing', () => {
    expect(streamed(['a', 'b', 'c', 'd', 'e'], 2)).toEqual(['{"ok":true,"data":{"items":[', '"a","b"', ',"c","d"', ',"e"', '],"total":5}}']);
  });
});
