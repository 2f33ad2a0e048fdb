import { html } from '../../platform/http/html.ts';
import type { SecondFactorMethod } from './events.ts';
import { TOTP_CODE, totpDigits } from './totp.ts';

/** A code as typed into a page: six digits (spaces ignored) are a TOTP code, anything else a recovery code. */
export const codeMethod = (code: string): SecondFactorMethod => (TOTP_CODE.test(totpDigits(code)) ? 'totp' : 'recovery_code');

/** The second step of a sign-in page's form: the challenge it answers (hidden) and the code. */
export const codeFields = (mfaToken: string) => html`<input type="hidden" name="mfa_token" value="${mfaToken}">
<label for="code">Authentication code</label><input id="code" name="code" autocomplete="one-time-code" required maxlength="64" autofocus>
<p class="hint">Enter the 6-digit code from your authenticator app, or one of your recovery codes.</p>`;
