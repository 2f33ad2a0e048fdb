/**
 * Remembers which events a consumer group has already applied, so a redelivered event (the bus is
 * at-least-once) has no second effect.
 *
 * One call instead of `seen` + `record`: checking and recording separately lets two deliveries of
 * one event both pass the check, and loses the record when the process dies between the effect and
 * the write. A PostgreSQL inbox does it in one transaction: insert (groupId, eventId) ON CONFLICT DO
 * NOTHING (a concurrent duplicate waits on the key), run the effect with that transaction as `tx`,
 * commit; nothing inserted means the event was already applied.
 */
export interface Inbox<Tx = void> {
  /**
   * Runs `effect` unless the event was already applied for the group, and records it in the same
   * unit of work. Resolves true when the effect ran, false for a duplicate. When the effect throws
   * nothing is recorded and the error propagates, so the redelivery runs it again.
   */
  runOnce(groupId: string, eventId: string, effect: (tx: Tx) => Promise<void>): Promise<boolean>;
}
