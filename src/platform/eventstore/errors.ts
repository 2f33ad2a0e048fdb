/** Raised when an append's expected revision does not match the stream. */
export class WrongExpectedVersionError extends Error {
  constructor(
    readonly streamId: string,
    readonly expected: string,
    readonly actual: bigint | 'no_stream',
  ) {
    super(`Wrong expected version on ${streamId}: expected ${expected}, actual ${String(actual)}`);
    this.name = 'WrongExpectedVersionError';
  }
}
