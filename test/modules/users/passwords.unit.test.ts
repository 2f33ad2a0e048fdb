import { describe, expect, it } from 'vitest';
import { PasswordHasher, passwordPolicyViolation } from '../../../src/modules/users/passwords.ts';
import { DEFAULT_SECURITY_SETTINGS } from '../../../src/modules/settings/defaults.ts';

describe('password policy and hashing', () => {
  it('applies minimum length and character classes with the spec messages', () => {
    const policy = DEFAULT_SECURITY_SETTINGS;
    expect(passwordPolicyViolation('Ab1', policy)).toBe('Password below the minimum length');
    expect(passwordPolicyViolation('abcdefgh1', policy)).toBe('Password fails complexity rules');
    expect(passwordPolicyViolation('ABCDEFGH1', policy)).toBe('Password fails complexity rules');
    expect(passwordPolicyViolation('Abcdefghi', policy)).toBe('Password fails complexity rules');
    expect(passwordPolicyViolation('Abcdefgh1', policy)).toBeNull();
    expect(passwordPolicyViolation('Abcdefgh1', { ...policy, passwordRequireSpecial: true })).toBe('Password fails complexity rules');
    expect(passwordPolicyViolation('Abcdefgh1!', { ...policy, passwordRequireSpecial: true })).toBeNull();
  });

  it('hashes with argon2id and verifies only the right password', async () => {
    const hasher = new PasswordHasher();
    const hash = await hasher.hash('Correct-Horse-1');
    expect(hash).toMatch(/^\$argon2id\$/);
    expect(await hasher.verify(hash, 'Correct-Horse-1')).toBe(true);
    expect(await hasher.verify(hash, 'correct-horse-1')).toBe(false);
    expect(await hasher.verify('not-a-hash', 'x')).toBe(false);
    expect(await hasher.verifyAgainstDummy('anything')).toBe(false);
  });
});
