import type { RoleQueries } from '../roles/queries.ts';
import type { ActiveUser } from '../users/decider.ts';
import type { TokenService } from './tokens.ts';

/** An access token for a user's session, carrying the names of the roles that still exist. */
export async function accessTokenFor(
  deps: { tokens: TokenService; roles: RoleQueries },
  tenant: string,
  user: ActiveUser,
  session: { sessionId: string; acr: string; amr: string[] },
  lifetimeSeconds: number,
) {
  const existing = await deps.roles.byNames(tenant, user.roles.map((r) => r.name));
  const roles = existing.filter((r) => user.roles.some((held) => held.id === r.id)).map((r) => r.name);
  return deps.tokens.issue({ sub: user.userId, tid: tenant, sid: session.sessionId, roles, acr: session.acr, amr: session.amr }, lifetimeSeconds);
}
