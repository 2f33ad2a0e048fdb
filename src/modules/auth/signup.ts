import { factorsDecider } from '../mfa/index.ts';
import type { SettingsProvider } from '../settings/index.ts';
import type { CreateUserInput, UserCommands } from '../users/index.ts';
import type { CommandContext } from '../../platform/commands/context.ts';
import { authError } from './errors.ts';
import type { AuthenticateUser } from './login.ts';

export type SignupInput = Pick<CreateUserInput, 'email' | 'username' | 'firstName' | 'lastName'> & { password: string };

/** Self-service registration (decisions.md, Logging in): a `user`-role account, signed in at once. */
export function signup(deps: { users: UserCommands; settings: SettingsProvider; authenticate: AuthenticateUser }) {
  return async function register(tenant: string, input: SignupInput, context: CommandContext) {
    const { settings } = await deps.settings.nested(tenant);
    if (!settings.general.allowSignup) throw authError('SIGNUP_DISABLED', 'Self-service signup is disabled in this tenant');
    const { userId, user, createdAt } = await deps.users.create(tenant, { ...input, roles: undefined, origin: 'signup' }, context);
    if (user.status !== 'active') throw new Error(`CreateUser left user ${userId} ${user.status}`);
    // A new account has no second factor: signing up signs in.
    const proof = { method: 'signup' as const, passwordMatches: true, amr: ['pwd'], factors: factorsDecider.initialState() };
    const { tokens, position } = await deps.authenticate(tenant, user, proof, { ...context, actor: userId });
    if (!tokens) throw new Error(`Signup of ${userId} met a second factor`);
    return { userId, user, createdAt, tokens, position };
  };
}
