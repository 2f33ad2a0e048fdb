import type { RoleQueries } from '../roles/index.ts';
import type { SessionCommands } from '../sessions/index.ts';
import { flatten, type SettingsProvider } from '../settings/index.ts';
import { emailReservation, userDecider, userStreamId, type ActiveUser, type PasswordHasher, type UserState } from '../users/index.ts';
import type { CommandContext } from '../../platform/commands/context.ts';
import { handleCommand, loadStates, toNewEvents, type CommandDeps, type LoadedState } from '../../platform/commands/handle-command.ts';
import { reservationReads, type ReservationDeps } from '../../platform/commands/reservations.ts';
import { authError } from './errors.ts';
import { newId } from '../../platform/ids.ts';
import type { StreamAppend } from '../../platform/eventstore/port.ts';
import { accessTokenFor } from './access-tokens.ts';
import { loginAttemptStreamId, loginStreamId, type LoginFailed } from './events.ts';
import { accountLocked, lockedUntil, loginDecider, type LoginAttempt, type LoginState } from './login-decider.ts';
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

const accountReads = (tenant: string, userId: string) =>
  [
    { decider: userDecider, streamId: userStreamId(tenant, userId) },
    { decider: loginDecider, streamId: loginStreamId(tenant, userId) },
  ] as const;

/** The account an e-mail's holder names, if it is active and still has that e-mail. */
function activeHolder(tenant: string, owner: string, user: UserState): ActiveUser | null {
  if (user.status !== 'active' || owner !== emailReservation(tenant, user.email, user.userId).owner) return null;
  return user;
}

const userIdOf = (owner: string) => owner.slice(owner.indexOf('.') + 1);

/**
 * The active account that owns an e-mail in a tenant, and its lockout state, from the write side
 * (never a lagging read model). One round trip when this instance saw the e-mail's holder before:
 * the reservation, the user and the login stream's tails are read together, and the result is used
 * only if the reservation still names that user (else the holder's streams are read next, as on a
 * first login: the reservation, then the user's two streams).
 */
export async function accountByEmail(deps: Pick<ReservationDeps, 'store' | 'reservationNames'>, tenant: string, email: string): Promise<{ user: ActiveUser; lockout: LoginState } | null> {
  const reservation = reservationReads(deps, tenant, 'email', email);
  const guess = reservation.remembered();
  let owner: string | null;
  let account: [LoadedState<UserState>, LoadedState<LoginState>] | null = null;
  if (guess) {
    const [keyed, legacy, user, lockout] = await loadStates(deps, [...reservation.reads, ...accountReads(tenant, userIdOf(guess))]);
    owner = reservation.holderAt(keyed, legacy).owner;
    if (owner === guess) account = [user, lockout];
  } else {
    const [keyed, legacy] = await loadStates(deps, reservation.reads);
    owner = reservation.holderAt(keyed, legacy).owner;
  }
  if (!owner) return null;
  const [user, lockout] = account ?? (await loadStates(deps, accountReads(tenant, userIdOf(owner))));
  const active = activeHolder(tenant, owner, user.state);
  return active && { user: active, lockout: lockout.state };
}

/** A failure that changes no account's state (unknown account, locked account), kept for the audit log. */
async function recordApart(deps: CommandDeps, tenant: string, data: LoginFailed['data'], context: CommandContext): Promise<void> {
  const failed: LoginFailed = { type: 'LoginFailed', data };
  await deps.store.append(loginAttemptStreamId(tenant, newId()), toNewEvents([failed], context, deps.clock), 'no_stream');
}

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
    const account = await accountByEmail(deps, tenant, email);
    if (!account) {
      await deps.hasher.verifyAgainstDummy(password);
      await recordApart(deps, tenant, { userId: null, reason: 'unknown_user', email: email.toLowerCase() }, context);
      throw invalidCredentials();
    }
    const { user, lockout } = account;
    const now = deps.clock.now();
    const until = lockedUntil(lockout, now);
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
