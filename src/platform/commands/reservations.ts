import { z } from 'zod';
import type { Clock } from '../clock.ts';
import { WrongExpectedVersionError } from '../eventstore/errors.ts';
import type { RecordedEvent, StreamAppend } from '../eventstore/port.ts';
import { defineEvent } from '../events/define-event.ts';
import type { CommandContext } from './context.ts';
import { toNewEvents, type CommandDeps } from './handle-command.ts';
import { ReservationNames } from './reservation-names.ts';

/**
 * Uniqueness (tenant names, e-mails, usernames, role names) as reservation streams, appended in the
 * same transaction as the owner's events: two racing claims cannot both win, unlike a read-model
 * check. A released value can be claimed again. Stream ids are keyed hashes (ReservationNames).
 */

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

/** What reserving needs: the store, the clock, and the key that names reservation streams. */
export interface ReservationDeps extends CommandDeps {
  reservationNames: ReservationNames;
}

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

/**
 * Who holds the value, and the stream the next claim or release goes to. A value reserved before
 * keyed names existed stays in its clear-text stream while held (its release goes there); once
 * free, new claims use the keyed stream. Both are read in one query; nothing claims under a
 * clear-text name any more, so that stream only ever moves from held to free.
 */
async function currentHolder(deps: Pick<ReservationDeps, 'store' | 'reservationNames'>, claim: Omit<Claim, 'owner'>) {
  const { keyed, legacy } = deps.reservationNames.streamsOf(claim.scope, claim.kind, claim.value);
  const [keyedEvents, legacyEvents] = await deps.store.readStreams([keyed, legacy]);
  const holderOf = (events: RecordedEvent[]) => {
    const last = events.at(-1);
    return last?.type === 'ReservationClaimed' ? (last.data as { owner: string }).owner : null;
  };
  const legacyOwner = holderOf(legacyEvents!);
  if (legacyOwner) return { owner: legacyOwner, streamId: legacy, revision: legacyEvents!.at(-1)!.revision };
  const last = keyedEvents!.at(-1);
  return { owner: holderOf(keyedEvents!), streamId: keyed, revision: last ? last.revision : ('no_stream' as const) };
}

function reservationAppend(
  deps: { clock: Clock },
  type: ReservationEventType,
  claim: Claim,
  at: { streamId: string; revision: bigint | 'no_stream' },
  context: CommandContext,
): StreamAppend[] {
  const event = { type, data: { kind: claim.kind, value: claim.value.toLowerCase(), owner: claim.owner } };
  return [{ streamId: at.streamId, expectedRevision: at.revision, events: toNewEvents([event], context, deps.clock) }];
}

/** The append that claims `value` for `owner`; throws ReservationTakenError if another holds it. */
export async function claimReservation(deps: ReservationDeps, claim: Claim, context: CommandContext): Promise<StreamAppend[]> {
  const holder = await currentHolder(deps, claim);
  if (holder.owner === claim.owner) return [];
  if (holder.owner) throw new ReservationTakenError(claim.kind, claim.value);
  return reservationAppend(deps, 'ReservationClaimed', claim, holder, context);
}

/** The append that frees `value` if `owner` holds it (nothing otherwise). */
export async function releaseReservation(deps: ReservationDeps, claim: Claim, context: CommandContext): Promise<StreamAppend[]> {
  const holder = await currentHolder(deps, claim);
  if (holder.owner !== claim.owner) return [];
  return reservationAppend(deps, 'ReservationReleased', claim, holder, context);
}

/** Whether an append failed because a reservation of `kind` was taken (checked or raced). */
export function isReservationConflict(error: unknown, kind: string): boolean {
  if (error instanceof ReservationTakenError) return error.kind === kind;
  return error instanceof WrongExpectedVersionError && ReservationNames.kindOf(error.streamId) === kind;
}

/** The stream that holds `value`, or null: the write side's own lookup (never a lagging read model). */
export async function reservationHolder(deps: Pick<ReservationDeps, 'store' | 'reservationNames'>, scope: string, kind: string, value: string): Promise<string | null> {
  return (await currentHolder(deps, { scope, kind, value })).owner;
}
