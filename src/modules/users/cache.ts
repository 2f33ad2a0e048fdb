import type { EventStore } from '../../platform/eventstore/port.ts';
import { readModelCache, type AppliedEventsSource } from '../../platform/projections/read-model-cache.ts';
import type { ActiveUser } from './decider.ts';
import { loadUser } from './load.ts';

const MAX_USERS = 100_000;

/**
 * A user as their tokens need them (claims, roles, enabled) and the password's version (which
 * sessions a change ends): no password material (nor the e-mail's version) is kept in memory.
 */
export type TokenSubject = Omit<ActiveUser, 'passwordHash' | 'passwordHistory' | 'emailVersion'>;

const userKey = (tenant: string, userId: string) => `${tenant}/${userId}`;

/** Events the users read model applies that change nothing a token needs (the last login, a lockout). */
const NOT_IN_TOKENS: ReadonlySet<string> = new Set(['LoginSucceeded', 'AccountLocked', 'AccountUnlocked']);

/**
 * Active users from memory, for the paths every token takes (refresh grants, userinfo). An entry is
 * loaded from the user's stream (the write side, never a lagging read model) and dropped in every
 * instance when the users projection applies an event of that user; a deleted or unknown user is null.
 */
/** The user behind a key, and whether the tenant has disabled or deleted it (its tokens are then refused). */
interface Entry {
  subject: TokenSubject | null;
  refused: boolean;
}

export function cachedTokenSubjects(source: AppliedEventsSource, store: EventStore) {
  const subjects = readModelCache<Entry>(source, {
    maxEntries: MAX_USERS,
    async load(key) {
      const slash = key.indexOf('/');
      const user = await loadUser(store, key.slice(0, slash), key.slice(slash + 1));
      if (user.status !== 'active') return { subject: null, refused: user.status === 'deleted' };
      const { passwordHash: _hash, passwordHistory: _history, emailVersion: _emailVersion, ...subject } = user;
      return { subject, refused: !subject.enabled };
    },
    stale: {
      users: (event) => {
        if (NOT_IN_TOKENS.has(event.type)) return [];
        const { userId } = event.data as { userId?: unknown };
        return typeof userId === 'string' ? [userKey(event.metadata.tenantId, userId)] : 'all';
      },
    },
  });
  const subjectOf = (entry: Entry) => entry.subject;
  const refusedOf = (entry: Entry) => entry.refused;
  return {
    get: (tenant: string, userId: string): Promise<TokenSubject | null> => subjects.get(userKey(tenant, userId)).then(subjectOf),
    /** The user itself once loaded (no promise, no tick: userinfo answers every token validation), else the load's promise. */
    current: (tenant: string, userId: string): TokenSubject | null | Promise<TokenSubject | null> => {
      const entry = subjects.current(userKey(tenant, userId));
      return entry instanceof Promise ? entry.then(subjectOf) : entry.subject;
    },
    /**
     * Whether the tenant has disabled or deleted the user (every access token of theirs is then
     * refused, however long it has to live); without a promise once loaded (every authenticated
     * request asks). A subject no user stream knows (a client) is not refused here.
     */
    refused: (tenant: string, userId: string): boolean | Promise<boolean> => {
      const entry = subjects.current(userKey(tenant, userId));
      return entry instanceof Promise ? entry.then(refusedOf) : entry.refused;
    },
  };
}

export type TokenSubjects = ReturnType<typeof cachedTokenSubjects>;
