import type { CachedRoles, Role } from '../roles/index.ts';
import type { TokenSubject, TokenSubjects } from '../users/index.ts';

/**
 * The claims userinfo answers, frozen with their roles list (shared: never change them), so that the
 * answer's serializer checks and writes them once (src/platform/http/zod-compilers.ts).
 */
export interface Userinfo {
  sub: string;
  email: string;
  email_verified: boolean;
  given_name: string | null;
  family_name: string | null;
  preferred_username: string;
  tenant: string;
  roles: string[];
}

/**
 * OIDC userinfo claims of a token's user, from memory: the cached user and the current names of
 * the roles they hold (a renamed role shows its new name). Null for a user that no longer exists.
 * Without a promise once the user and the tenant's roles are loaded. The claims are made once per
 * cached user and loaded list of roles: a change of either is a new object in its cache (the
 * projections drop the stale entry), so claims made from the old ones are never answered again.
 * A disabled user never gets here: the authenticator refuses their tokens on every route.
 */
export function userinfoClaims(deps: { subjects: Pick<TokenSubjects, 'current'>; roles: Pick<CachedRoles, 'current'> }) {
  const made = new WeakMap<TokenSubject, { tenant: string; roles: Role[]; claims: Userinfo }>();
  const claimsOf = (tenant: string, user: TokenSubject, roles: Role[]): Userinfo => {
    const known = made.get(user);
    if (known?.tenant === tenant && known.roles === roles) return known.claims;
    const held = new Set(user.roles.map((role) => role.id));
    const claims: Userinfo = Object.freeze({
      sub: user.userId,
      email: user.email,
      email_verified: user.emailVerified,
      given_name: user.firstName,
      family_name: user.lastName,
      preferred_username: user.username ?? user.email,
      tenant,
      // The roles list is ordered by name.
      roles: Object.freeze(roles.filter((role) => held.has(role.id)).map((role) => role.name)) as string[],
    });
    made.set(user, { tenant, roles, claims });
    return claims;
  };
  const withRoles = (tenant: string, user: TokenSubject | null): Userinfo | null | Promise<Userinfo | null> => {
    if (!user) return null;
    const roles = deps.roles.current(tenant);
    return roles instanceof Promise ? roles.then((loaded) => claimsOf(tenant, user, loaded)) : claimsOf(tenant, user, roles);
  };
  return (tenant: string, userId: string): Userinfo | null | Promise<Userinfo | null> => {
    const user = deps.subjects.current(tenant, userId);
    return user instanceof Promise ? user.then((loaded) => withRoles(tenant, loaded)) : withRoles(tenant, user);
  };
}

export type UserinfoClaims = ReturnType<typeof userinfoClaims>;
