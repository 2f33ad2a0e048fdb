import { WrongExpectedVersionError } from './errors.ts';
import type { ExpectedRevision } from './port.ts';

/** The position encoding leaves 20 bits for the ordinal of an event inside its transaction. */
export const MAX_EVENTS_PER_APPEND = 100_000;

/** Throws WrongExpectedVersionError unless `head` (-1n: no stream) satisfies `expected`. */
export function checkExpectedRevision(streamId: string, expected: ExpectedRevision, head: bigint): void {
  const satisfied =
    expected === 'any' ||
    (expected === 'no_stream' && head === -1n) ||
    (expected === 'stream_exists' && head >= 0n) ||
    (typeof expected === 'bigint' && expected === head);
  if (!satisfied) throw new WrongExpectedVersionError(streamId, String(expected), head < 0n ? 'no_stream' : head);
}
