import type { CachedRoles } from '../roles/index.ts';
import type { TokenSubjects } from '../users/index.ts';

/**
 * OIDC userinfo claims of a token's user, from memory: the cached user and the current names of
 * the roles they hold (a renamed role shows its new name). Null for a user that no longer exists.
 */
export function userinfoClaims(deps: { subjects: TokenSubjects; roles: Pick<CachedRoles, 'list'> }) {
  return async (tenant: string, userId: string) => {
    const user = await deps.subjects.get(tenant, userId);
    if (!user) return null;
    const held = new Set(user.roles.map((role) => role.id));
    return {
      sub: user.userId,
      email: user.email,
      email_verified: user.emailVerified,
      given_name: user.firstName,
      family_name: user.lastName,
      preferred_username: user.username ?? user.email,
      tenant,
      // The roles list is ordered by name.
      roles: (await deps.roles.list(tenant)).filter((role) => held.has(role.id)).map((role) => role.name),
    };
  };
}

export type UserinfoClaims = ReturnType<typeof userinfoClaims>;
