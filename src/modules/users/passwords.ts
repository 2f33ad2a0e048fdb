import { hash, verify } from '@node-rs/argon2';
import { validationError } from '../../platform/errors.ts';

/**
 * argon2id (the library's default algorithm) with OWASP's minimum parameters as the default:
 * 19 MiB memory, 2 iterations, 1 lane. Configurable for bigger machines.
 */
export interface HashingParameters {
  memoryCost: number;
  timeCost: number;
  parallelism: number;
}

export const OWASP_ARGON2ID: HashingParameters = { memoryCost: 19_456, timeCost: 2, parallelism: 1 };

export class PasswordHasher {
  private dummyHash: Promise<string> | null = null;

  constructor(private readonly parameters: HashingParameters = OWASP_ARGON2ID) {}

  hash(password: string): Promise<string> {
    return hash(password, this.parameters);
  }

  async verify(passwordHash: string, password: string): Promise<boolean> {
    try {
      return await verify(passwordHash, password);
    } catch {
      return false;
    }
  }

  /** Same cost as a real check, for unknown accounts: timing does not reveal which e-mails exist. */
  async verifyAgainstDummy(password: string): Promise<false> {
    this.dummyHash ??= this.hash('dummy-password-for-timing');
    await this.verify(await this.dummyHash, password);
    return false;
  }
}

export interface PasswordPolicy {
  passwordMinLength: number;
  passwordRequireUppercase: boolean;
  passwordRequireLowercase: boolean;
  passwordRequireNumbers: boolean;
  passwordRequireSpecial: boolean;
}

/** Longest password accepted: argon2 cost must not be driven by the caller. */
export const MAX_PASSWORD_LENGTH = 256;

/** The spec's per-row messages; null when the password satisfies the policy. */
export function passwordPolicyViolation(password: string, policy: PasswordPolicy): string | null {
  if (password.length < policy.passwordMinLength) return 'Password below the minimum length';
  const fails =
    password.length > MAX_PASSWORD_LENGTH ||
    (policy.passwordRequireUppercase && !/\p{Lu}/u.test(password)) ||
    (policy.passwordRequireLowercase && !/\p{Ll}/u.test(password)) ||
    (policy.passwordRequireNumbers && !/\p{Nd}/u.test(password)) ||
    (policy.passwordRequireSpecial && !/[^\p{L}\p{Nd}]/u.test(password));
  return fails ? 'Password fails complexity rules' : null;
}

export function assertPasswordPolicy(password: string, policy: PasswordPolicy, path = 'body.password'): void {
  const violation = passwordPolicyViolation(password, policy);
  if (violation) throw validationError(violation, [{ path, message: violation }]);
}

/** passwordHistoryCount: the new password may not match the current one nor the count-1 before it (0 disables). */
export async function assertNotRecentlyUsed(
  hasher: PasswordHasher,
  password: string,
  user: { passwordHash: string | null; passwordHistory: string[] },
  historyCount: number,
): Promise<void> {
  if (historyCount === 0) return;
  const recent = [...(user.passwordHash ? [user.passwordHash] : []), ...user.passwordHistory].slice(0, historyCount);
  const matches = await Promise.all(recent.map((hash) => hasher.verify(hash, password)));
  if (matches.some(Boolean)) {
    const message = `Password must differ from the last ${historyCount} passwords`;
    throw validationError(message, [{ path: 'body.newPassword', message }]);
  }
}
