import { z } from 'zod';
import type { Clock } from '../clock.ts';
import { WrongExpectedVersionError } from '../eventstore/errors.ts';
import type { EventStore, StreamAppend } from '../eventstore/port.ts';
import { defineEvent } from '../events/define-event.ts';
import type { CommandContext } from './context.ts';
import { toNewEvents } from './handle-command.ts';

/**
 * Uniqueness (tenant names, e-mails, usernames, role names) as reservation streams, appended in the
 * same transaction as the owner's events: two racing claims cannot both win, unlike a read-model
 * check. A released value can be claimed again.
 */
const CATEGORY = 'reservation';

/**
 * `value` is what is unique (an e-mail, a username, a name): personal whenever it names a person,
 * so it is encrypted with the owner's data key (the owner's stream names the subject).
 */
const reservation = z.strictObject({ kind: z.string(), value: z.string(), owner: z.string() });
const owner = (data: { owner: string }) => data.owner;
export const reservationClaimed = defineEvent({ type: 'ReservationClaimed', data: reservation, personal: ['value'], dataSubject: owner });
export const reservationReleased = defineEvent({ type: 'ReservationReleased', data: reservation, personal: ['value'], dataSubject: owner });
export const reservationEvents = [reservationClaimed, reservationReleased];
export type ReservationEventType = (typeof reservationEvents)[number]['type'];

export const reservationStreamId = (scope: string, kind: string, value: string): string =>
  `${CATEGORY}-${scope}.${kind}.${value.toLowerCase()}`;

export class ReservationTakenError extends Error {
  constructor(
    readonly kind: string,
    readonly value: string,
  ) {
    super(`${kind} '${value}' is taken`);
    this.name = 'ReservationTakenError';
  }
}

interface Claim {
  scope: string;
  kind: string;
  value: string;
  owner: string;
}

async function currentHolder(store: EventStore, streamId: string) {
  const events = await store.readStream(streamId);
  const last = events.at(-1);
  const owner = last?.type === 'ReservationClaimed' ? (last.data as { owner: string }).owner : null;
  return { owner, revision: last ? last.revision : ('no_stream' as const) };
}

function reservationAppend(
  deps: { clock: Clock },
  type: ReservationEventType,
  claim: Claim,
  revision: bigint | 'no_stream',
  context: CommandContext,
): StreamAppend[] {
  const event = { type, data: { kind: claim.kind, value: claim.value.toLowerCase(), owner: claim.owner } };
  const streamId = reservationStreamId(claim.scope, claim.kind, claim.value);
  return [{ streamId, expectedRevision: revision, events: toNewEvents([event], context, deps.clock) }];
}

/** The append that claims `value` for `owner`; throws ReservationTakenError if another holds it. */
export async function claimReservation(
  deps: { store: EventStore; clock: Clock },
  claim: Claim,
  context: CommandContext,
): Promise<StreamAppend[]> {
  const { owner, revision } = await currentHolder(deps.store, reservationStreamId(claim.scope, claim.kind, claim.value));
  if (owner === claim.owner) return [];
  if (owner) throw new ReservationTakenError(claim.kind, claim.value);
  return reservationAppend(deps, 'ReservationClaimed', claim, revision, context);
}

/** The append that frees `value` if `owner` holds it (nothing otherwise). */
export async function releaseReservation(
  deps: { store: EventStore; clock: Clock },
  claim: Claim,
  context: CommandContext,
): Promise<StreamAppend[]> {
  const { owner, revision } = await currentHolder(deps.store, reservationStreamId(claim.scope, claim.kind, claim.value));
  if (owner !== claim.owner) return [];
  return reservationAppend(deps, 'ReservationReleased', claim, revision, context);
}

/** Whether an append failed because a reservation of `kind` was taken (checked or raced). */
export function isReservationConflict(error: unknown, kind: string): boolean {
  if (error instanceof ReservationTakenError) return error.kind === kind;
  return (
    error instanceof WrongExpectedVersionError &&
    error.streamId.startsWith(`${CATEGORY}-`) &&
    error.streamId.split('.')[1] === kind
  );
}

/** The stream that holds `value`, or null: the write side's own lookup (never a lagging read model). */
export async function reservationHolder(store: EventStore, scope: string, kind: string, value: string): Promise<string | null> {
  return (await currentHolder(store, reservationStreamId(scope, kind, value))).owner;
}
