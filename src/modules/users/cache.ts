import { readModelCache, type AppliedEventsSource } from '../../platform/projections/read-model-cache.ts';
import type { UserDetail, UserQueries } from './queries.ts';

const MAX_USERS = 100_000;

/** What a user's own token may read about them (OIDC userinfo); nothing that changes with the clock. */
export type UserView = Pick<UserDetail, 'id' | 'email' | 'emailVerified' | 'firstName' | 'lastName' | 'username' | 'roles'>;

const userKey = (tenant: string, userId: string) => `${tenant}/${userId}`;

/**
 * Users as their tokens see them, from memory: an entry is dropped in every instance when the users
 * projection applies an event of that user, and all of them when a role changes (role names).
 */
export function cachedUserViews(source: AppliedEventsSource, queries: Pick<UserQueries, 'get'>) {
  const views = readModelCache<UserView | null>(source, {
    maxEntries: MAX_USERS,
    async load(key) {
      const slash = key.indexOf('/');
      const user = await queries.get(key.slice(0, slash), key.slice(slash + 1));
      if (!user) return null;
      const { id, email, emailVerified, firstName, lastName, username, roles } = user;
      return { id, email, emailVerified, firstName, lastName, username, roles };
    },
    stale: {
      users: (event) => {
        const { userId } = event.data as { userId?: unknown };
        return typeof userId === 'string' ? [userKey(event.metadata.tenantId, userId)] : 'all';
      },
      roles: () => 'all',
    },
  });
  return { get: (tenant: string, userId: string) => views.get(userKey(tenant, userId)) };
}

export type UserViews = ReturnType<typeof cachedUserViews>;
