import type { Inbox } from './inbox.ts';
import type { BatchHandler, DeliveredMessage, PublicEvent } from './port.ts';

export interface DeduplicatingHandlerOptions<Tx> {
  /** The consumer group the handler is subscribed with: deduplication is per group. */
  groupId: string;
  inbox: Inbox<Tx>;
  /** The effect of one event; `tx` is the inbox's unit of work (a transaction for PostgreSQL). */
  applyEvent: (event: PublicEvent, tx: Tx, message: DeliveredMessage) => Promise<void>;
}

/**
 * A batch handler that applies each event at most once per group, in delivery order, however
 * often the bus redelivers it. A failing event stops the batch there: the events before it stay
 * recorded, and the redelivery skips them and retries from the failing one.
 */
export function deduplicatingHandler<Tx>({ groupId, inbox, applyEvent }: DeduplicatingHandlerOptions<Tx>): BatchHandler {
  return async (messages) => {
    for (const message of messages) {
      await inbox.runOnce(groupId, message.value.id, (tx) => applyEvent(message.value, tx, message));
    }
  };
}
