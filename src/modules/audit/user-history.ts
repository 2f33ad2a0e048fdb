import { lockedUntil, loginDecider, loginStreamId, type LoginEvent } from '../auth/index.ts';
import { factorsDecider, mfaStreamId, type MfaEvent } from '../mfa/index.ts';
import { userDecider, userStreamId, type UserDetail, type UserEvent } from '../users/index.ts';
import { fold } from '../../platform/commands/decider.ts';
import type { EventStore, RecordedEvent } from '../../platform/eventstore/port.ts';
import { isUuid } from '../../platform/ids.ts';

export interface HistoryItem {
  /** Global log position, as a decimal string (it can exceed 2^53). */
  position: string;
  type: string;
  occurredAt: string;
  actor: string;
  data: unknown;
}

const asDomainEvents = <E>(events: RecordedEvent[]) => events.map(({ type, data }) => ({ type, data })) as E[];

/**
 * The user as GET /api/users/{id} showed it at `asOf`: the user's stream folded with the users
 * decider up to that instant, with last login and lock from the login stream and TOTP from the
 * second-factor stream; null when the user did not exist then (not yet created, or already
 * deleted). Phone, SMS and WebAuthn have no events yet.
 */
export function userAsOf(userEvents: RecordedEvent[], loginEvents: RecordedEvent[], mfaEvents: RecordedEvent[], asOf: Date): UserDetail | null {
  const until = (event: RecordedEvent) => new Date(event.metadata.occurredAt) <= asOf;
  const seen = userEvents.filter(until);
  const user = fold(userDecider, asDomainEvents<UserEvent>(seen));
  if (user.status !== 'active') return null;
  const logins = loginEvents.filter(until);
  const lastLogin = logins.findLast((event) => event.type === 'LoginSucceeded');
  return {
    id: user.userId,
    email: user.email,
    username: user.username,
    firstName: user.firstName,
    lastName: user.lastName,
    enabled: user.enabled,
    emailVerified: user.emailVerified,
    createdAt: seen[0]!.metadata.occurredAt,
    roles: user.roles.map((role) => role.name).sort(),
    phoneNumber: null,
    phoneNumberVerified: false,
    lastLoginAt: lastLogin?.metadata.occurredAt ?? null,
    lockedUntil: lockedUntil(fold(loginDecider, asDomainEvents<LoginEvent>(logins)), asOf)?.toISOString() ?? null,
    twoFactor: { totpEnabled: fold(factorsDecider, asDomainEvents<MfaEvent>(mfaEvents.filter(until))).totpSecret !== null, smsEnabled: false, webauthnEnabled: false },
  };
}

/** Compliance reads of a user's own streams (never a read model): history and point-in-time state. */
/** `masked`: the event's data with its secrets masked (the event catalogue's). */
export function userHistory(store: EventStore, masked: (event: RecordedEvent) => unknown) {
  const userEvents = (tenant: string, userId: string) => (isUuid(userId) ? store.readStream(userStreamId(tenant, userId)) : Promise.resolve([]));
  return {
    /** The user's events oldest first, secrets masked; empty for a user the tenant never had. */
    async events(tenant: string, userId: string): Promise<HistoryItem[]> {
      return (await userEvents(tenant, userId)).map((event) => ({
        position: event.position.toString(),
        type: event.type,
        occurredAt: event.metadata.occurredAt,
        actor: event.metadata.actor,
        data: masked(event),
      }));
    },
    async asOf(tenant: string, userId: string, at: Date): Promise<UserDetail | null> {
      const events = await userEvents(tenant, userId);
      if (events.length === 0) return null;
      const [logins, factors] = await Promise.all([store.readStream(loginStreamId(tenant, userId)), store.readStream(mfaStreamId(tenant, userId))]);
      return userAsOf(events, logins, factors, at);
    },
  };
}

export type UserHistory = ReturnType<typeof userHistory>;
