import { z } from 'zod';
import type { Clock } from '../clock.ts';
import { WrongExpectedVersionError } from '../eventstore/errors.ts';
import type { StreamAppend } from '../eventstore/port.ts';
import { defineEvent } from '../events/define-event.ts';
import type { CommandContext } from './context.ts';
import type { DomainEvent } from './decider.ts';
import { FoldedStates } from './folded-states.ts';
import { loadStates, toNewEvents, type CommandDeps, type LoadedState } from './handle-command.ts';
import { ReservationNames, type ReservationStreams } from './reservation-names.ts';

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

/** Who holds a reservation stream: the owner of its last claim, null once released or never claimed. */
const holderDecider = {
  initialState: (): string | null => null,
  evolve: (_holder: string | null, event: DomainEvent): string | null => (event.type === 'ReservationClaimed' ? (event.data as { owner: string }).owner : null),
};

type Holder = LoadedState<string | null>;

/**
 * The holder, and the stream the next claim or release goes to. A value reserved before keyed names
 * existed stays in its clear-text stream while held (its release goes there); once free, new claims
 * use the keyed stream. Nothing claims under a clear-text name any more, so that stream only ever
 * moves from held to free.
 */
function holderAt(streams: ReservationStreams, keyed: Holder, legacy: Holder) {
  if (legacy.state) return { owner: legacy.state, streamId: streams.legacy, revision: legacy.revision! };
  return { owner: keyed.state, streamId: streams.keyed, revision: keyed.revision ?? ('no_stream' as const) };
}

/**
 * Finding who holds `value`: the two streams to read (each from after the holder this instance
 * folded last), for `loadStates` beside other streams in the same round trip, and the holder they show.
 */
export function reservationReads(deps: Pick<ReservationDeps, 'store' | 'reservationNames'>, scope: string, kind: string, value: string) {
  const streams = deps.reservationNames.streamsOf(scope, kind, value);
  return {
    reads: [
      { decider: holderDecider, streamId: streams.keyed },
      { decider: holderDecider, streamId: streams.legacy },
    ] as const,
    /** The holder as this instance last folded it (no read; null if it never did or saw none). */
    remembered(): string | null {
      const folded = FoldedStates.of<string | null>(deps.store, holderDecider);
      return folded.get(streams.legacy)?.state ?? folded.get(streams.keyed)?.state ?? null;
    },
    holderAt: (keyed: Holder, legacy: Holder) => holderAt(streams, keyed, legacy),
  };
}

/** Both streams in one query. */
async function currentHolder(deps: Pick<ReservationDeps, 'store' | 'reservationNames'>, claim: Omit<Claim, 'owner'>) {
  const reservation = reservationReads(deps, claim.scope, claim.kind, claim.value);
  const [keyed, legacy] = await loadStates(deps, reservation.reads);
  return reservation.holderAt(keyed, legacy);
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
