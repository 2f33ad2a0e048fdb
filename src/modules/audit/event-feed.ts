import type { PublicEvent } from '../../platform/bus/port.ts';
import { validationError } from '../../platform/errors.ts';
import type { EventStore, RecordedEvent, TenantEventsQuery } from '../../platform/eventstore/port.ts';

/** A feed request: filters of the tenant's events, `after` a position of its own (or absent). */
export type FeedQuery = Omit<TenantEventsQuery, 'tenantId'>;

export interface FeedPage {
  events: PublicEvent[];
  /** The position to pass as `after` for the next page; null when nothing follows yet. */
  next: string | null;
}

/** Events read per step of an NDJSON stream: one query and one written chunk each. */
const STREAM_BATCH = 2000;

export interface EventFeedDeps {
  store: EventStore;
  /** The topic's envelope of an event, redacted as the relay publishes it. */
  envelope: (event: RecordedEvent) => PublicEvent;
  /** Whether a feed may filter on this event type (the catalogue's). */
  isKnownType: (type: string) => boolean;
}

/**
 * A tenant's own events in the topic's envelope, oldest first (GET /api/events): pages on positions
 * under the store's visibility bound, so a reader that follows `next` sees every event once even
 * while writes commit out of order; or one NDJSON stream of everything that matches.
 */
export function eventFeed({ store, envelope, isKnownType }: EventFeedDeps) {
  /** Refuses filters that name nothing and a position of no event of the tenant: never a silent empty answer. */
  async function check(tenant: string, query: FeedQuery): Promise<void> {
    const unknown = (query.types ?? []).filter((type) => !isKnownType(type));
    if (unknown.length > 0) {
      throw validationError('Unknown event types', unknown.map((type) => ({ path: 'querystring.types', message: `${type} is not an event type of the catalogue` })));
    }
    if (query.from && query.to && query.from > query.to) {
      throw validationError('from is after to', [{ path: 'querystring.from', message: 'must not be after to' }]);
    }
    if (query.after !== undefined && query.after !== 0n && (await store.tenantAt(query.after)) !== tenant) {
      throw validationError('after is not a position of this tenant', [{ path: 'querystring.after', message: 'must be the position of one of the tenant\'s events (or 0)' }]);
    }
  }

  return {
    async page(tenant: string, query: FeedQuery, limit: number): Promise<FeedPage> {
      await check(tenant, query);
      // One more than asked tells whether anything follows.
      const events = await store.readTenantEvents({ ...query, tenantId: tenant }, limit + 1);
      const shown = events.slice(0, limit);
      return { events: shown.map(envelope), next: events.length > limit ? shown.at(-1)!.position.toString() : null };
    },

    /**
     * Every matching event up to the log's head when the stream starts, as NDJSON chunks of a batch
     * each. The caller pulls chunk by chunk (backpressure), so memory holds one batch and the next
     * one being read, however long the history.
     */
    async stream(tenant: string, query: FeedQuery): Promise<AsyncGenerator<string>> {
      await check(tenant, query);
      const head = await store.headPosition();
      const read = (after: bigint | undefined): Promise<RecordedEvent[]> => {
        const reading = store.readTenantEvents({ ...query, tenantId: tenant, ...(after === undefined ? {} : { after }) }, STREAM_BATCH);
        // A client that leaves early never awaits the batch read ahead: its failure is not unhandled.
        reading.catch(() => undefined);
        return reading;
      };
      return (async function* lines() {
        let reading: Promise<RecordedEvent[]> | null = read(query.after);
        while (reading) {
          const events: RecordedEvent[] = (await reading).filter((event) => event.position <= head);
          const last = events.at(-1);
          // The next batch is read while this one is written.
          reading = last && events.length === STREAM_BATCH && last.position < head ? read(last.position) : null;
          if (events.length > 0) yield `${events.map((event) => JSON.stringify(envelope(event))).join('\n')}\n`;
        }
      })();
    },
  };
}

export type EventFeed = ReturnType<typeof eventFeed>;
