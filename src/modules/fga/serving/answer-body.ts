import { Readable } from 'node:stream';

/**
 * Answers of up to this many ids are written as one text. Handed to the socket, a string is
 * copied out of the JS heap at once (the part the kernel does not take yet waits in native memory,
 * freed when sent), so nothing of the answer outlives the request's young-generation garbage. A
 * streamed answer instead keeps its ids until a slow client has read them: they outlive
 * young-generation collections and pile up in the old generation until a full one (the RSS under
 * list-objects load, docs/performance.md). Beyond the bound the text would cost more than the ids
 * (about 15 bytes an id against 8), so a larger answer is streamed a chunk at a time.
 */
export const WHOLE_ANSWER_MAX_IDS = 100_000;

/** The body of an answer of `ids` ids, from its chunks: one string up to `wholeUpTo` ids, else a stream pulling a chunk at a time. */
export function answerBody(chunks: Generator<string>, ids: number, wholeUpTo = WHOLE_ANSWER_MAX_IDS): string | Readable {
  if (ids > wholeUpTo) return Readable.from(chunks, { objectMode: true, highWaterMark: 1 });
  let text = '';
  for (const chunk of chunks) text += chunk;
  return text;
}
