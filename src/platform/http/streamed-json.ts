/**
 * A JSON document whose one large array is written as the socket takes it: `before`, the items
 * `perChunk` at a time (each chunk one string), then `after`. The caller's `before`/`after` close
 * the document around the array, so the text equals JSON.stringify of the whole value and no
 * string of the whole answer is ever built.
 */
export function* jsonArrayChunks(before: string, items: readonly unknown[], after: string, perChunk = 1000): Generator<string> {
  yield `${before}[`;
  for (let start = 0; start < items.length; start += perChunk) {
    let chunk = start === 0 ? '' : ',';
    const end = Math.min(items.length, start + perChunk);
    for (let index = start; index < end; index += 1) chunk += `${index === start ? '' : ','}${JSON.stringify(items[index])}`;
    yield chunk;
  }
  yield `]${after}`;
}
