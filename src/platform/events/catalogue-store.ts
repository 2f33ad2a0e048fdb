import type { EventStore, ExpectedRevision, NewEvent, StreamAppend, SubscribeOptions, TenantEventsQuery } from '../eventstore/port.ts';
import type { EventCatalogue } from './catalogue.ts';

/**
 * The event store as the service uses it: appends only events of the catalogue that fit their
 * schema (a multi-stream append is checked whole before anything is written), records the version
 * each was written in, and reads every event upcast to its current version.
 */
export class CatalogueEventStore implements EventStore {
  constructor(
    private readonly inner: EventStore,
    private readonly catalogue: EventCatalogue,
  ) {}

  private checked(streamId: string, events: NewEvent[]): NewEvent[] {
    return events.map((event) => {
      const { version } = this.catalogue.check(streamId, event);
      return { ...event, metadata: { ...event.metadata, schemaVersion: version } };
    });
  }

  async append(streamId: string, events: NewEvent[], expectedRevision?: ExpectedRevision) {
    return this.inner.append(streamId, this.checked(streamId, events), expectedRevision);
  }

  async appendMulti(appends: StreamAppend[]) {
    const checked = appends.map((append) => ({ ...append, events: this.checked(append.streamId, append.events) }));
    return this.inner.appendMulti(checked);
  }

  async readStream(streamId: string, fromRevision?: bigint) {
    return (await this.inner.readStream(streamId, fromRevision)).map((event) => this.catalogue.upcast(event));
  }

  async readStreams(streamIds: string[]) {
    return (await this.inner.readStreams(streamIds)).map((events) => events.map((event) => this.catalogue.upcast(event)));
  }

  async readAll(afterPosition: bigint | undefined, limit: number) {
    return (await this.inner.readAll(afterPosition, limit)).map((event) => this.catalogue.upcast(event));
  }

  async readTenantEvents(query: TenantEventsQuery, limit: number) {
    return (await this.inner.readTenantEvents(query, limit)).map((event) => this.catalogue.upcast(event));
  }

  tenantAt(position: bigint) {
    return this.inner.tenantAt(position);
  }

  subscribeToAll(options: SubscribeOptions) {
    return this.inner.subscribeToAll({ ...options, onEvents: (events) => options.onEvents(events.map((event) => this.catalogue.upcast(event))) });
  }

  headPosition() {
    return this.inner.headPosition();
  }

  close() {
    return this.inner.close();
  }
}
