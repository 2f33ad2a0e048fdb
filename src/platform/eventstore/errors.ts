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

/** Some, but not all, of an append's event ids are already recorded (or in other streams). */
export class IdempotencyConflictError extends Error {
  constructor(readonly eventIds: string[]) {
    super(`Events already recorded with other content: ${eventIds.join(', ')}`);
    this.name = 'IdempotencyConflictError';
  }
}
