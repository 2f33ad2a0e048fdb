import type { CommandContext } from '../../platform/commands/context.ts';
import { handleCommand, type CommandDeps } from '../../platform/commands/handle-command.ts';
import { reservationHolder } from '../../platform/commands/reservations.ts';
import { AppError } from '../../platform/errors.ts';
import type { RoleQueries } from '../roles/queries.ts';
import type { SessionCommands } from '../sessions/commands.ts';
import type { SettingsProvider } from '../settings/provider.ts';
import { flatten } from '../settings/sections.ts';
import { emailReservation } from '../users/events.ts';
import { loadUser } from '../users/load.ts';
import type { PasswordHasher } from '../users/passwords.ts';
import { accessTokenFor } from './access-tokens.ts';
import { loginStreamId } from './events.ts';
import { loginDecider } from './login-decider.ts';
import type { TokenService } from './tokens.ts';

export interface LoginDeps extends CommandDeps {
  hasher: PasswordHasher;
  tokens: TokenService;
  roles: RoleQueries;
  settings: SettingsProvider;
  sessions: SessionCommands;
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
  return async function login(tenant: string, email: string, password: string, context: CommandContext): Promise<{ tokens: IssuedTokens; position: bigint }> {
    const owner = await reservationHolder(deps.store, tenant, 'email', email);
    const userId = owner ? owner.slice(owner.indexOf('.') + 1) : null;
    const user = userId ? await loadUser(deps.store, tenant, userId) : null;
    if (!userId || user?.status !== 'active' || owner !== emailReservation(tenant, user.email, userId).owner) {
      await deps.hasher.verifyAgainstDummy(password);
      throw invalidCredentials();
    }
    const passwordMatches = user.passwordHash
      ? await deps.hasher.verify(user.passwordHash, password)
      : await deps.hasher.verifyAgainstDummy(password);

    const { settings: nested } = await deps.settings.nested(tenant);
    const settings = flatten(nested);
    const sessionContext = { ...context, actor: userId };
    const auth = { acr: 'aal1', amr: ['pwd'] };
    const session = await deps.sessions.start(tenant, userId, settings, sessionContext, auth);
    const attempt = {
      type: 'RecordLogin' as const,
      userId,
      sessionId: session.sessionId,
      method: 'password' as const,
      account: { enabled: user.enabled, hasPassword: user.passwordHash !== null },
      passwordMatches,
    };
    const result = await handleCommand(deps, loginDecider, loginStreamId(tenant, userId), attempt, sessionContext, (events) =>
      events[0]?.type === 'LoginSucceeded' ? session.appends : [],
    );
    if (result.events[0]?.type !== 'LoginSucceeded') throw invalidCredentials();

    const access = await accessTokenFor(deps, tenant, user, { sessionId: session.sessionId, ...auth }, nested);
    return {
      tokens: { accessToken: access.token, refreshToken: session.refreshToken, tokenType: 'Bearer', expiresIn: access.expiresIn, sessionId: session.sessionId },
      position: result.position,
    };
  };
}
