import type { ClientGrant } from './code-events.ts';

/** Sessions remembered per instance: ~300 bytes each. */
const MAX_SESSIONS = 100_000;

/**
 * Which OAuth client holds a session (its code or device grant), remembered so that a refresh
 * grant does not read the session's grant stream each time (docs/oauth.md, Performance).
 * - A binding is the first event of `oauthgrant-<tenant>.<sessionId>`, which never changes: it is
 *   remembered as read.
 * - "No client" is remembered only once the session's own refresh token rotated without one
 *   (`rememberUnbound` after a successful refresh): a session is bound in the request that signed
 *   its user in, before its first refresh token leaves the service sealed in the code or the
 *   approval, so a session whose token was presented unbound is never bound later. A guess at a
 *   session id alone remembers nothing.
 * Neither says whether the session is still usable: each refresh still decides on the session's
 * stream (revocation, expiry, reuse detection).
 */
export class SessionBindings {
  private readonly known = new Map<string, ClientGrant | null>();

  constructor(private readonly maxSessions = MAX_SESSIONS) {}

  /** The client holding the session, null when it is known to have none, undefined when not known here. */
  get(tenant: string, sessionId: string): ClientGrant | null | undefined {
    return this.known.get(keyOf(tenant, sessionId));
  }

  rememberBound(tenant: string, sessionId: string, grant: ClientGrant): void {
    this.remember(keyOf(tenant, sessionId), grant);
  }

  rememberUnbound(tenant: string, sessionId: string): void {
    this.remember(keyOf(tenant, sessionId), null);
  }

  private remember(key: string, value: ClientGrant | null): void {
    // Re-inserted at the end: the sessions remembered longest ago are dropped first (a bound one is
    // remembered once, when first read; an unbound one after each of its refreshes).
    this.known.delete(key);
    if (this.known.size >= this.maxSessions) this.known.delete(this.known.keys().next().value!);
    this.known.set(key, value);
  }
}

const keyOf = (tenant: string, sessionId: string) => `${tenant}/${sessionId}`;
