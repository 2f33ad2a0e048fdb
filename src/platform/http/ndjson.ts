/** Newline-delimited JSON (one value per line): the media type of answers streamed instead of built whole. */
export const NDJSON = 'application/x-ndjson';

/** Whether the request's Accept header names NDJSON. */
export const wantsNdjson = (accept: string | undefined): boolean => accept?.split(',').some((type) => type.trim().split(';')[0] === NDJSON) ?? false;

/** `items` as NDJSON chunks of `perChunk` lines each, made one at a time as the socket takes them. */
export function* ndjsonChunks<T>(items: readonly T[], line: (item: T) => unknown, perChunk = 1000): Generator<string> {
  for (let start = 0; start < items.length; start += perChunk) {
    let chunk = '';
    for (const item of items.slice(start, start + perChunk)) chunk += `${JSON.stringify(line(item))}\n`;
    yield chunk;
  }
}
