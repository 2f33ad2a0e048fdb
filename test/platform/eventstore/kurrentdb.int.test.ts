import { describe, it } from 'vitest';
import { KurrentEventStore } from '../../../src/platform/eventstore/kurrentdb.ts';
import { eventStoreContract } from './event-store-contract.ts';

// Needs a KurrentDB 25.1+ server (multiStreamAppend) and a user allowed to read $all, e.g.
// kurrentdb://admin:changeit@localhost:2113?tls=false, or an insecure node without credentials.
const connectionString = process.env.KURRENTDB_CONNECTION_STRING;

if (connectionString) {
  eventStoreContract('KurrentDB', async () => {
    const store = await KurrentEventStore.connect(connectionString);
    return { store, close: () => store.close() };
  });
} else {
  describe.skip('EventStore contract: KurrentDB (set KURRENTDB_CONNECTION_STRING to run)', () => {
    it('passes the EventStore contract against a KurrentDB server', () => undefined);
  });
}
