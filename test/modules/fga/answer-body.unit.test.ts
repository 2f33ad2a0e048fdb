import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { answerBody } from '../../../src/modules/fga/serving/answer-body.ts';
import { jsonArrayChunks } from '../../../src/platform/http/streamed-json.ts';

const ids = Array.from({ length: 25 }, (_, index) => `doc${index}`);
const chunks = () => jsonArrayChunks('{"objectIds":', ids, `,"total":${ids.length}}`, 10);
const expected = JSON.stringify({ objectIds: ids, total: ids.length });

describe('answerBody', () => {
  it('writes an answer up to the bound as one text', () => {
    expect(answerBody(chunks(), ids.length, ids.length)).toBe(expected);
  });

  it('streams a larger answer, a chunk at a time, to the same text', async () => {
    const body = answerBody(chunks(), ids.length, ids.length - 1);
    expect(body).toBeInstanceOf(Readable);
    const read: string[] = [];
    for await (const chunk of body as Readable) read.push(chunk as string);
    expect(read.length).toBe(5);
    expect(read.join('')).toBe(expected);
  });
});
