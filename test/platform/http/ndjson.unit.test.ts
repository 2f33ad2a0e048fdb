import { describe, expect, it } from 'vitest';
import { ndjsonChunks, wantsNdjson } from '../../../src/platform/http/ndjson.ts';

describe('NDJSON answers', () => {
  it('writes one line per item, a bounded number of lines per chunk', () => {
    const chunks = [...ndjsonChunks(['a', 'b', 'c', 'd', 'e'], (id) => ({ id }), 2)];
    expect(chunks).toEqual(['{"id":"a"}\n{"id":"b"}\n', '{"id":"c"}\n{"id":"d"}\n', '{"id":"e"}\n']);
    expect([...ndjsonChunks([], (id) => id)]).toEqual([]);
  });

  it('is chosen by an Accept header naming its media type, with or without parameters', () => {
    expect(wantsNdjson('application/json, application/x-ndjson;q=0.9')).toBe(true);
    expect(wantsNdjson('application/json')).toBe(false);
    expect(wantsNdjson(undefined)).toBe(false);
  });
});
