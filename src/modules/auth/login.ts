import { createHash, randomBytes } from 'node:crypto';
import { availableMethods, factorsDecider, factorsRead, invalidCode, mfaStreamId, type FactorsState, type SecondFactorMethod } from '../mfa/index.ts';
import type { RoleQueries } from '../roles/index.ts';
import type { SessionCommands } from '../sessions/index.ts';
import { flatten, type NestedSettings, type SettingsProvider } from '../settings/index.ts';
import { emailReservation, userDecider, userStreamId, type ActiveUser, type PasswordHasher, type UserState } from '../users/index.ts';
import type { CommandContext } from '../../platform/commands/context.ts';
import { handleCommand, loadState, loadStates, toNewEvents, type CommandDeps, type LoadedState } from '../../platform/commands/handle-command.ts';
import { reservationReads, type ReservationDeps } from '../../platform/commands/reservations.ts';
import { authError } from './errors.ts';
import { newId } from '../../platform/ids.ts';
import type { StreamAppend } from '../../platform/eventstore/port.ts';
import { accessTokenFor } from './access-tokens.ts';
import { loginAttemptStreamId, loginStreamId, type LoginFailed } from './events.ts';
import {
  accountLocked,
  lockedUntil,
  loginDecider,
  type LoginAttempt,
  type LoginCommand,
  type LoginState,
  type SecondFactorAttempt,
} from './login-decider.ts';
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
  mfaEnrollmentRequired?: true;
}

export const accountReads = (tenant: string, userId: string) =>
  [
    { decider: userDecider, streamId: userStreamId(tenant, userId) },
    { decider: loginDecider, streamId: loginStreamId(tenant, userId) },
    factorsRead(tenant, userId),
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
 * first login: the reservation, then the user's three streams: profile, logins, second factors).
 */
export async function accountByEmail(
  deps: Pick<ReservationDeps, 'store' | 'reservationNames'>,
  tenant: string,
  email: string,
): Promise<{ user: ActiveUser; lockout: LoginState; factors: FactorsState } | null> {
  const reservation = reservationReads(deps, tenant, 'email', email);
  const guess = reservation.remembered();
  let owner: string | null;
  let account: [LoadedState<UserState>, LoadedState<LoginState>, LoadedState<FactorsState>] | null = null;
  if (guess) {
    const [keyed, legacy, user, lockout, factors] = await loadStates(deps, [...reservation.reads, ...accountReads(tenant, userIdOf(guess))]);
    owner = reservation.holderAt(keyed, legacy).owner;
    if (owner === guess) account = [user, lockout, factors];
  } else {
    const [keyed, legacy] = await loadStates(deps, reservation.reads);
    owner = reservation.holderAt(keyed, legacy).owner;
  }
  if (!owner) return null;
  const [user, lockout, factors] = account ?? (await loadStates(deps, accountReads(tenant, userIdOf(owner))));
  const active = activeHolder(tenant, owner, user.state);
  return active && { user: active, lockout: lockout.state, factors: factors.state };
}

/** A failure that changes no account's state (unknown account, locked account), kept for the audit log. */
async function recordApart(deps: CommandDeps, tenant: string, data: LoginFailed['data'], context: CommandContext): Promise<void> {
  const failed: LoginFailed = { type: 'LoginFailed', data };
  await deps.store.append(loginAttemptStreamId(tenant, newId()), toNewEvents([failed], context, deps.clock), 'no_stream');
}

type Proof = Pick<LoginAttempt, 'method' | 'passwordMatches'> & {
  amr: string[];
  /** The account's second factors when the caller read them (else they are read here). */
  factors?: FactorsState;
};

/** What a sign-in answers: tokens, or a challenge for the second factor (decisions.md, Two-factor). */
export type SignInResult = { tokens: IssuedTokens; position: bigint; challenge?: undefined } | { challenge: MfaChallenge; position: bigint; tokens?: undefined };

export interface MfaChallenge {
  mfaRequired: true;
  mfaToken: string;
  availableMethods: SecondFactorMethod[];
}

/** An mfaToken is five minutes' proof of the first factor (decisions.md); it names its account. */
const CHALLENGE_SECONDS = 300;
export const challengeHashOf = (secret: string) => createHash('sha256').update(secret).digest('base64url');

export type AuthenticateUser = ReturnType<typeof authenticatedSessions>;

/**
 * Records an authentication attempt on the account's login stream and, when it succeeds, starts
 * a session in the same atomic append (with `alsoAppend`, e.g. the used magic link). Lockout is decided there, on the stream's own order, so a
 * burst of attempts locks the account exactly at the threshold whatever instance serves them.
 * An account with a second factor gets a challenge instead: its mfaToken completes the sign-in
 * (`completeSecondFactor`).
 */
export function authenticatedSessions(deps: LoginDeps) {
  const signIn = sessionSignIn(deps);
  return async function authenticate(tenant: string, user: ActiveUser, proof: Proof, context: CommandContext, alsoAppend: StreamAppend[] = []): Promise<SignInResult> {
    const factors = proof.factors ?? (await loadState(deps, factorsDecider, mfaStreamId(tenant, user.userId))).state;
    const methods = availableMethods(factors);
    const secret = methods.length > 0 ? randomBytes(32).toString('base64url') : null;
    const now = deps.clock.now();
    const attempt: Omit<LoginAttempt, 'sessionId' | 'policy'> = {
      type: 'RecordLogin',
      userId: user.userId,
      method: proof.method,
      account: { enabled: user.enabled, hasPassword: user.passwordHash !== null },
      passwordMatches: proof.passwordMatches,
      now: now.toISOString(),
      ...(secret && { challenge: { hash: challengeHashOf(secret), expiresAt: new Date(now.getTime() + CHALLENGE_SECONDS * 1000).toISOString(), amr: proof.amr, methods } }),
    };
    const outcome = await signIn(tenant, user, attempt, { acr: 'aal1', amr: proof.amr }, context, () => alsoAppend);
    if ('tokens' in outcome) return outcome;
    // The challenge is open (and any magic link spent with it): the mfaToken names the account and proves the first factor.
    return { challenge: { mfaRequired: true, mfaToken: `${user.userId}.${secret}`, availableMethods: methods }, position: outcome.position };
  };
}

/**
 * decisions.md, Security settings: while requireMfaForAdmin holds, an administrator (a role with
 * admin:all) with no second factor signs in with a password alone, told to enrol one. A first
 * factor that reached tokens had no second factor to ask for (it would have opened a challenge).
 */
const mustEnrolFactor = (step: SignInCommand, settings: NestedSettings, held: readonly { permissions: string[] }[]) =>
  step.type === 'RecordLogin' && settings.login.requireMfaForAdmin && held.some((role) => role.permissions.includes('admin:all'));

type SignInCommand = Omit<LoginAttempt, 'sessionId' | 'policy'> | Omit<SecondFactorAttempt, 'sessionId' | 'policy'>;

/**
 * Decides a sign-in step on the login stream: a success starts a session in the same append (with
 * `alsoAppend`'s streams), a challenge appends only those, and a failure throws (423 when it locks).
 */
export function sessionSignIn(deps: LoginDeps) {
  return async function signIn(
    tenant: string,
    user: ActiveUser,
    step: SignInCommand,
    auth: { acr: string; amr: string[] },
    context: CommandContext,
    alsoAppend: () => StreamAppend[],
  ): Promise<{ tokens: IssuedTokens; position: bigint } | { opened: true; position: bigint }> {
    const { settings: nested } = await deps.settings.nested(tenant);
    const settings = flatten(nested);
    const sessionContext = { ...context, actor: user.userId };
    const sessionId = newId();
    const prepared: { session?: Awaited<ReturnType<SessionCommands['start']>> } = {};
    const command = { ...step, sessionId, policy: settings } as LoginCommand;
    // The session is prepared only for a success: failures cost no session queries.
    const result = await handleCommand(deps, loginDecider, loginStreamId(tenant, user.userId), command, sessionContext, async (events) => {
      if (events[0]?.type === 'LoginMfaRequired') return alsoAppend();
      if (events[0]?.type !== 'LoginSucceeded') return [];
      prepared.session = await deps.sessions.start(tenant, user.userId, settings, sessionContext, { ...auth, passwordVersion: user.passwordVersion }, sessionId);
      return [...prepared.session.appends, ...alsoAppend()];
    });
    if (result.events[0]?.type === 'LoginMfaRequired') return { opened: true, position: result.position };
    const { session } = prepared;
    if (result.events[0]?.type !== 'LoginSucceeded' || !session) {
      const now = new Date(step.now);
      const until = lockedUntil(result.state, now);
      if (result.events.length === 0 && until) await recordApart(deps, tenant, { userId: user.userId, reason: 'locked' }, sessionContext);
      if (until) throw accountLocked(until, now);
      throw step.type === 'CompleteSecondFactor' && !step.codeMatches ? invalidCode() : invalidCredentials();
    }
    const access = await accessTokenFor(deps, tenant, user, { sessionId, ...auth }, nested);
    const tokens: IssuedTokens = {
      accessToken: access.token,
      refreshToken: session.refreshToken,
      tokenType: 'Bearer',
      expiresIn: access.expiresIn,
      sessionId,
      ...(mustEnrolFactor(step, nested, access.held) && { mfaEnrollmentRequired: true }),
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
    const { user, lockout, factors } = account;
    const now = deps.clock.now();
    const until = lockedUntil(lockout, now);
    if (until) {
      await recordApart(deps, tenant, { userId: user.userId, reason: 'locked' }, { ...context, actor: user.userId });
      throw accountLocked(until, now);
    }
    const passwordMatches = user.passwordHash
      ? await deps.hasher.verify(user.passwordHash, password)
      : await deps.hasher.verifyAgainstDummy(password);
    return authenticate(tenant, user, { method: 'password', passwordMatches, amr: ['pwd'], factors }, context);
  };
}
