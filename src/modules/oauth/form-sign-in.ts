import type { IssuedTokens, passwordLogin, secondFactorSignIn } from '../auth/index.ts';
import { codeFields, codeMethod } from '../mfa/index.ts';
import type { CommandContext } from '../../platform/commands/context.ts';
import { DomainError } from '../../platform/errors.ts';
import { html } from '../../platform/http/html.ts';

export interface FormSignInDeps {
  login: ReturnType<typeof passwordLogin>;
  completeSecondFactor: ReturnType<typeof secondFactorSignIn>;
}

/**
 * Where a page's sign-in form stands after a post: signed in; at the code step (an account with a
 * second factor, or a wrong code); or back at the e-mail and password, with the status and message.
 */
export type FormSignIn =
  | { step: 'signed-in'; tokens: IssuedTokens }
  | { step: 'code'; mfaToken: string; status: number; problem?: string }
  | { step: 'credentials'; status: number; problem: string };

const PROBLEMS: Record<string, { status: number; message: string }> = {
  INVALID_CREDENTIALS: { status: 401, message: 'Invalid email or password.' },
  ACCOUNT_LOCKED: { status: 423, message: 'This account is locked after too many failed attempts. Try again later.' },
  MFA_TOKEN_INVALID: { status: 401, message: 'This sign-in has expired. Enter your email and password again.' },
  INVALID_OTP: { status: 401, message: 'The code is not valid. Try again.' },
};

/**
 * The sign-in of the service's own pages (authorization, device verification): e-mail and
 * password, then, on an account with a second factor, a code posted with the challenge's mfa_token.
 */
export function formSignIn(deps: FormSignInDeps) {
  return async function signInWithForm(tenant: string, fields: Record<string, string | undefined>, context: CommandContext): Promise<FormSignIn> {
    const mfaToken = fields.mfa_token;
    try {
      if (mfaToken) {
        const code = fields.code ?? '';
        const { tokens } = await deps.completeSecondFactor(tenant, mfaToken, codeMethod(code), code, context);
        return { step: 'signed-in', tokens };
      }
      const result = await deps.login(tenant, fields.email ?? '', fields.password ?? '', context);
      return result.tokens ? { step: 'signed-in', tokens: result.tokens } : { step: 'code', mfaToken: result.challenge.mfaToken, status: 200 };
    } catch (error) {
      const problem = error instanceof DomainError ? PROBLEMS[error.code] : undefined;
      if (!problem) throw error;
      if (mfaToken && error instanceof DomainError && error.code === 'INVALID_OTP') return { step: 'code', mfaToken, status: problem.status, problem: problem.message };
      return { step: 'credentials', status: problem.status, problem: problem.message };
    }
  };
}

/** The form's fields for the step it is at: e-mail and password, or the code with the challenge it answers. */
export const signInFields = (mfaToken?: string) =>
  mfaToken
    ? codeFields(mfaToken)
    : html`<label for="email">Email</label><input id="email" name="email" type="email" autocomplete="username" required maxlength="254">
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required maxlength="256">`;
