/**
 * A JSON document whose one large array is written as the socket takes it: `before`, the items
 * `perChunk` at a time (each chunk one string), then `after`. The caller's `before`/`after` close
 * the document around the array, so the text equals JSON.stringify of the whole value and no
 * string of the whole answer is ever built.
 */
export function* jsonArrayChunks(before: string, items: readonly unknown[], after: string, perChunk = 1000): Generator<string> {
  yield `${before}[`;
  for (let start = 0; start < items.length; start += perChunk) {
    // One flat string per chunk (JSON.stringify of the slice, brackets dropped), not a rope of items.
    const elements = JSON.stringify(items.slice(start, start + perChunk)).slice(1, -1);
    yield start === 0 ? elements : `,${elements}`;
  }
  yield `]${after}`;
}
