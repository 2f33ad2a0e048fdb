import type { RoleQueries } from '../roles/index.ts';
import type { SessionCommands } from '../sessions/index.ts';
import { flatten, type SettingsProvider } from '../settings/index.ts';
import { emailReservation, loadUser, type ActiveUser, type PasswordHasher } from '../users/index.ts';
import type { CommandContext } from '../../platform/commands/context.ts';
import { handleCommand, loadState, toNewEvents, type CommandDeps } from '../../platform/commands/handle-command.ts';
import { reservationHolder, type ReservationDeps } from '../../platform/commands/reservations.ts';
import { authError } from './errors.ts';
import { newId } from '../../platform/ids.ts';
import type { StreamAppend } from '../../platform/eventstore/port.ts';
import { accessTokenFor } from './access-tokens.ts';
import { loginAttemptStreamId, loginStreamId, type LoginFailed } from './events.ts';
import { accountLocked, lockedUntil, loginDecider, type LoginAttempt } from './login-decider.ts';
import type { TokenService } from './tokens.ts';

export interface LoginDeps extends ReservationDeps {
  hasher: PasswordHasher;
  tokens: TokenService;
  roles: RoleQueries;
  settings: SettingsProvider;
  sessions: SessionCommands;
}

export const invalidCredentials = () => authError('INVALID_CREDENTIALS', 'Invalid email or password');

export interface IssuedTokens {
  accessToken: string;
  refreshToken: string;
  tokenType: 'Bearer';
  expiresIn: number;
  sessionId: string;
}

/** The active account that owns an e-mail in a tenant, from the write side (never a lagging read model). */
export async function accountByEmail(deps: Pick<ReservationDeps, 'store' | 'reservationNames'>, tenant: string, email: string): Promise<ActiveUser | null> {
  const owner = await reservationHolder(deps, tenant, 'email', email);
  const userId = owner ? owner.slice(owner.indexOf('.') + 1) : null;
  const user = userId ? await loadUser(deps.store, tenant, userId) : null;
  if (!userId || user?.status !== 'active' || owner !== emailReservation(tenant, user.email, userId).owner) return null;
  return user;
}

/** A failure that changes no account's state (unknown account, locked account), kept for the audit log. */
async function recordApart(deps: CommandDeps, tenant: string, data: LoginFailed['data'], context: CommandContext): Promise<void> {
  const failed: LoginFailed = { type: 'LoginFailed', data };
  await deps.store.append(loginAttemptStreamId(tenant, newId()), toNewEvents([failed], context, deps.clock), 'no_stream');
}

/** The account's lockout state: the tail of its login stream after the state this instance folded last. */
const loadLoginState = async (deps: CommandDeps, tenant: string, userId: string) => (await loadState(deps, loginDecider, loginStreamId(tenant, userId))).state;

type Proof = Pick<LoginAttempt, 'method' | 'passwordMatches'> & { amr: string[] };

export type AuthenticateUser = ReturnType<typeof authenticatedSessions>;

/**
 * Records an authentication attempt on the account's login stream and, when it succeeds, starts
 * a session in the same atomic append (with `alsoAppend`, e.g. the used magic link). Lockout is decided there, on the stream's own order, so a
 * burst of attempts locks the account exactly at the threshold whatever instance serves them.
 */
export function authenticatedSessions(deps: LoginDeps) {
  return async function authenticate(tenant: string, user: ActiveUser, proof: Proof, context: CommandContext, alsoAppend: StreamAppend[] = []) {
    const { settings: nested } = await deps.settings.nested(tenant);
    const settings = flatten(nested);
    const sessionContext = { ...context, actor: user.userId };
    const auth = { acr: 'aal1', amr: proof.amr };
    const sessionId = newId();
    const prepared: { session?: Awaited<ReturnType<SessionCommands['start']>> } = {};
    const now = deps.clock.now();
    const attempt: LoginAttempt = {
      type: 'RecordLogin',
      userId: user.userId,
      sessionId,
      method: proof.method,
      account: { enabled: user.enabled, hasPassword: user.passwordHash !== null },
      passwordMatches: proof.passwordMatches,
      now: now.toISOString(),
      policy: settings,
    };
    // The session is prepared only for a success: failures cost no session queries.
    const result = await handleCommand(deps, loginDecider, loginStreamId(tenant, user.userId), attempt, sessionContext, async (events) => {
      if (events[0]?.type !== 'LoginSucceeded') return [];
      prepared.session = await deps.sessions.start(tenant, user.userId, settings, sessionContext, auth, sessionId);
      return [...prepared.session.appends, ...alsoAppend];
    });
    const { session } = prepared;
    if (result.events[0]?.type !== 'LoginSucceeded' || !session) {
      const until = lockedUntil(result.state, now);
      if (result.events.length === 0 && until) await recordApart(deps, tenant, { userId: user.userId, reason: 'locked' }, sessionContext);
      throw until ? accountLocked(until, now) : invalidCredentials();
    }
    const access = await accessTokenFor(deps, tenant, user, { sessionId, ...auth }, nested);
    const tokens: IssuedTokens = {
      accessToken: access.token,
      refreshToken: session.refreshToken,
      tokenType: 'Bearer',
      expiresIn: access.expiresIn,
      sessionId,
    };
    return { tokens, position: result.position };
  };
}

/**
 * Password login. Unknown accounts, wrong passwords and disabled accounts look the same from
 * outside (same error, an argon2 verification in every case). A locked account answers 423 before
 * any hashing. Every attempt is an event (failures on unknown accounts too, for the audit log).
 */
export function passwordLogin(deps: LoginDeps) {
  const authenticate = authenticatedSessions(deps);
  return async function login(tenant: string, email: string, password: string, context: CommandContext) {
    const user = await accountByEmail(deps, tenant, email);
    if (!user) {
      await deps.hasher.verifyAgainstDummy(password);
      await recordApart(deps, tenant, { userId: null, reason: 'unknown_user', email: email.toLowerCase() }, context);
      throw invalidCredentials();
    }
    const now = deps.clock.now();
    const until = lockedUntil(await loadLoginState(deps, tenant, user.userId), now);
    if (until) {
      await recordApart(deps, tenant, { userId: user.userId, reason: 'locked' }, { ...context, actor: user.userId });
      throw accountLocked(until, now);
    }
    const passwordMatches = user.passwordHash
      ? await deps.hasher.verify(user.passwordHash, password)
      : await deps.hasher.verifyAgainstDummy(password);
    return authenticate(tenant, user, { method: 'password', passwordMatches, amr: ['pwd'] }, context);
  };
}
