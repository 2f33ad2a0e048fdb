import type { CommandContext } from '../../platform/commands/context.ts';
import { fold } from '../../platform/commands/decider.ts';
import { handleCommand, toNewEvents, type CommandDeps } from '../../platform/commands/handle-command.ts';
import { reservationHolder } from '../../platform/commands/reservations.ts';
import { AppError } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import type { RoleQueries } from '../roles/queries.ts';
import { sessionStreamId, type SessionStarted } from '../sessions/events.ts';
import { newRefreshToken } from '../sessions/refresh-tokens.ts';
import type { SettingsProvider } from '../settings/provider.ts';
import { userDecider } from '../users/decider.ts';
import { emailReservation, userStreamId, type UserEvent } from '../users/events.ts';
import type { PasswordHasher } from '../users/passwords.ts';
import { loginStreamId } from './events.ts';
import { loginDecider } from './login-decider.ts';
import type { TokenService } from './tokens.ts';

export interface LoginDeps extends CommandDeps {
  hasher: PasswordHasher;
  tokens: TokenService;
  roles: RoleQueries;
  settings: SettingsProvider;
}

const invalidCredentials = () => new AppError('INVALID_CREDENTIALS', 401, 'Invalid email or password');

export interface IssuedTokens {
  accessToken: string;
  refreshToken: string;
  tokenType: 'Bearer';
  expiresIn: number;
  sessionId: string;
}

/**
 * Password login. Unknown accounts, wrong passwords and disabled accounts look the same from
 * outside (same error, an argon2 verification in every case); the attempt is recorded as an event,
 * and a success starts a session in the same atomic append.
 */
export function passwordLogin(deps: LoginDeps) {
  return async function login(tenant: string, email: string, password: string, context: CommandContext): Promise<IssuedTokens> {
    const owner = await reservationHolder(deps.store, tenant, 'email', email);
    if (!owner) {
      await deps.hasher.verifyAgainstDummy(password);
      throw invalidCredentials();
    }
    const userId = owner.slice(owner.indexOf('.') + 1);
    const user = fold(userDecider, (await deps.store.readStream(userStreamId(tenant, userId))) as unknown as UserEvent[]);
    if (user.status !== 'active' || owner !== emailReservation(tenant, user.email, userId).owner) {
      await deps.hasher.verifyAgainstDummy(password);
      throw invalidCredentials();
    }
    const passwordMatches = user.passwordHash
      ? await deps.hasher.verify(user.passwordHash, password)
      : await deps.hasher.verifyAgainstDummy(password);

    const settings = await deps.settings.forTenant(tenant);
    const sessionId = newId();
    const refresh = newRefreshToken(sessionId);
    const now = deps.clock.now();
    const sessionContext = { ...context, actor: userId };
    const started: SessionStarted = {
      type: 'SessionStarted',
      data: {
        sessionId,
        userId,
        refreshTokenHash: refresh.hash,
        ipAddress: context.clientIp ?? null,
        userAgent: context.userAgent ?? null,
        expiresAt: new Date(now.getTime() + settings.sessionMaxLifetime * 1000).toISOString(),
        idleTimeoutSeconds: settings.sessionIdleTimeout,
        acr: 'aal1',
        amr: ['pwd'],
      },
    };
    const attempt = {
      type: 'RecordLogin' as const,
      userId,
      sessionId,
      method: 'password' as const,
      account: { enabled: user.enabled, hasPassword: user.passwordHash !== null },
      passwordMatches,
    };
    const result = await handleCommand(deps, loginDecider, loginStreamId(tenant, userId), attempt, sessionContext, (events) =>
      events[0]?.type === 'LoginSucceeded'
        ? [{ streamId: sessionStreamId(tenant, sessionId), expectedRevision: 'no_stream', events: toNewEvents([started], sessionContext, deps.clock) }]
        : [],
    );
    if (result.events[0]?.type !== 'LoginSucceeded') throw invalidCredentials();

    const roles = (await deps.roles.byNames(tenant, user.roles.map((r) => r.name))).filter((r) => user.roles.some((u) => u.id === r.id));
    const access = await deps.tokens.issue(
      { sub: userId, tid: tenant, sid: sessionId, roles: roles.map((r) => r.name), acr: 'aal1', amr: ['pwd'] },
      settings.accessTokenExpiry,
    );
    return { accessToken: access.token, refreshToken: refresh.token, tokenType: 'Bearer', expiresIn: access.expiresIn, sessionId };
  };
}
