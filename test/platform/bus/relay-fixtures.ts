import pino from 'pino';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { z } from 'zod';
import { deduplicatingHandler } from '../../../src/platform/bus/deduplicating-consumer.ts';
import type { BatchHandler, DeliveredMessage, EventBus } from '../../../src/platform/bus/port.ts';
import { PostgresInbox } from '../../../src/platform/bus/postgres-inbox.ts';
import { EventRelay, type RelayOptions } from '../../../src/platform/bus/relay.ts';
import type { Pool } from '../../../src/platform/db/pool.ts';
import type { EventStore } from '../../../src/platform/eventstore/port.ts';
import { PostgresEventStore } from '../../../src/platform/eventstore/postgres.ts';
import { EventCatalogue } from '../../../src/platform/events/catalogue.ts';
import { defineEvent } from '../../../src/platform/events/define-event.ts';
import { newId } from '../../../src/platform/ids.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { testEvent } from '../eventstore/event-store-contract.ts';

export const logger = pino({ level: process.env.LOG_LEVEL ?? 'silent' });

/** Generous: a real broker needs a group join (and sometimes a rebalance) before the first delivery. */
export const DELIVERY_TIMEOUT = { timeout: 60_000, interval: 100 };

/**
 * The relay tests' own catalogue (the platform knows no domain events): sensitive fields at the
 * top, inside array elements, and in events whose other fields must pass untouched.
 */
const relayTestCatalogue = new EventCatalogue([
  defineEvent({
    type: 'UserCreated',
    data: z.strictObject({
      userId: z.string(),
      email: z.string(),
      passwordHash: z.string(),
      roles: z.array(z.strictObject({ id: z.string(), name: z.string() })),
      credentials: z.array(z.strictObject({ label: z.string(), secretHash: z.string(), sealedSeed: z.string() })),
    }),
    sensitive: ['passwordHash', 'credentials[].secretHash', 'credentials[].sealedSeed'],
  }),
  defineEvent({
    type: 'SessionStarted',
    data: z.strictObject({ sessionId: z.string(), userId: z.string(), refreshTokenHash: z.string(), acr: z.string() }),
    sensitive: ['refreshTokenHash'],
  }),
  ...['UserProfileUpdated', 'ThingHappened', 'SomethingHappened'].map((type) => defineEvent({ type, data: z.looseObject({}) })),
]);

export const uniqueTopic = (label: string): string => `test.relay.${label}.${newId()}`;

/** The consumers' effect lives in PostgreSQL, beside the inbox, written in the inbox's transaction. */
async function createEffectsTable(pool: Pool): Promise<void> {
  await pool.query(`create table if not exists relay_effects (
    seq bigserial primary key, group_id text not null, event_id text not null, stream_id text not null, revision bigint not null)`);
}

/** A consumer group's handler: records every delivery, applies each event once through the PostgreSQL inbox. */
function effectConsumer(pool: Pool, groupId: string): { handler: BatchHandler; deliveries: DeliveredMessage[] } {
  const deliveries: DeliveredMessage[] = [];
  const applyOnce = deduplicatingHandler({
    groupId,
    inbox: new PostgresInbox(pool),
    applyEvent: async (event, tx) => {
      await tx.query('insert into relay_effects (group_id, event_id, stream_id, revision) values ($1, $2, $3, $4)', [
        groupId,
        event.id,
        event.streamId,
        event.revision,
      ]);
    },
  });
  return {
    deliveries,
    handler: async (batch) => {
      deliveries.push(...batch);
      await applyOnce(batch);
    },
  };
}

export async function effects(pool: Pool, groupId: string): Promise<{ event_id: string; stream_id: string }[]> {
  const { rows } = await pool.query('select event_id, stream_id from relay_effects where group_id = $1 order by seq', [groupId]);
  return rows;
}

/** Appends `perStream` events to each stream, one append at a time, round-robin over the streams. */
export async function appendRoundRobin(store: EventStore, streams: string[], perStream: number): Promise<Map<string, string[]>> {
  const appended = new Map(streams.map((stream) => [stream, [] as string[]]));
  for (let round = 0; round < perStream; round++) {
    for (const stream of streams) {
      const event = testEvent('ThingHappened', { round });
      await store.append(stream, [event]);
      appended.get(stream)!.push(event.id);
    }
  }
  return appended;
}

export const newStreams = (count: number): string[] => Array.from({ length: count }, () => `thing-acme.${newId()}`);

/** Every appended event applied exactly once, and each stream's events applied in append order. */
export function expectEachAppliedOnceInStreamOrder(applied: { event_id: string; stream_id: string }[], appended: Map<string, string[]>): void {
  for (const [stream, ids] of appended) {
    expect(applied.filter((effect) => effect.stream_id === stream).map((effect) => effect.event_id)).toEqual(ids);
  }
}

export interface RelayTestBed<Bus extends EventBus> {
  db: TestDatabase;
  store: PostgresEventStore;
  bus: Bus;
  /** A relay on the bed's store and bus, stopped after the test. */
  startRelay(topic: string, options?: Partial<RelayOptions>): EventRelay;
  /** Subscribes a new group with the effect consumer from the beginning of `topic`. */
  consume(topic: string): Promise<{ groupId: string; deliveries: DeliveredMessage[] }>;
}

/** One test file's world: a private database with the effects table, its event store and the bus under test. */
export function relayTestBed<Bus extends EventBus>(openBus: () => Promise<Bus>): RelayTestBed<Bus> {
  const relays: EventRelay[] = [];
  const bed = {
    startRelay(topic, options = {}) {
      const relay = new EventRelay({ store: bed.store, bus: bed.bus, database: bed.db.pool.options, topic, publicData: (event) => relayTestCatalogue.publicData(event), logger, standbyPollMs: 50, ...options });
      relays.push(relay);
      relay.start();
      return relay;
    },
    async consume(topic) {
      const groupId = `group-${newId()}`;
      const consumer = effectConsumer(bed.db.pool, groupId);
      await bed.bus.subscribe({ groupId, topic, fromBeginning: true, handler: consumer.handler });
      return { groupId, deliveries: consumer.deliveries };
    },
  } as RelayTestBed<Bus>;
  beforeAll(async () => {
    bed.db = await createTestDatabase();
    await createEffectsTable(bed.db.pool);
    bed.store = new PostgresEventStore(bed.db.pool, { pollIntervalMs: 50 });
    bed.bus = await openBus();
  });
  afterEach(async () => {
    await Promise.all(relays.splice(0).map((relay) => relay.stop()));
  });
  afterAll(async () => {
    await bed.bus?.close();
    await bed.store?.close();
    await bed.db?.drop();
  });
  return bed;
}
