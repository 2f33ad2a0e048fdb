import { randomInt } from 'node:crypto';
import type { CommandContext } from '../../platform/commands/context.ts';
import { DomainError } from '../../platform/errors.ts';
import type { TenantCommands } from './commands.ts';

export interface BootstrapDeps {
  tenants: TenantCommands;
  firstAdmin: {
    check(tenant: string, password: string): Promise<void>;
    create(tenant: string, email: string, password: string, context: CommandContext): Promise<void>;
  };
  /** Where the one-time credentials of a generated administrator are announced. */
  announce(message: string): void;
  /** Resolves once the tenant's roles and settings are readable (the admin is created with role admin). */
  tenantReadable(): Promise<void>;
}

const ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789';

/** 24 characters from 57 (140 bits) plus one of each class, so any password policy of the tenant passes. */
export function generatePassword(): string {
  const pick = (from: string) => from[randomInt(from.length)]!;
  const random = Array.from({ length: 24 }, () => pick(ALPHABET)).join('');
  return `${random}-${pick('ABCDEFGHJKLMNPQRSTUVWXYZ')}${pick('abcdefghijkmnopqrstuvwxyz')}${pick('23456789')}`;
}

const ignoring = (code: string) => (error: unknown) => {
  if (!(error instanceof DomainError && error.code === code)) throw error;
};

/**
 * Creates the platform tenant and its first administrator on first start (decisions.md,
 * Bootstrap); a no-op afterwards. With IAM_BOOTSTRAP_ADMIN_EMAIL and _PASSWORD that admin is
 * created (idempotent). Without them, the start that creates the tenant also creates
 * `admin@<tenant>.local` with a generated password and announces both once: no later start can
 * show the password again, as only its hash is kept.
 */
export async function bootstrapPlatformTenant(
  deps: BootstrapDeps,
  options: { tenant: string; adminEmail?: string | undefined; adminPassword?: string | undefined; context: CommandContext },
): Promise<void> {
  const { tenant, adminEmail, adminPassword, context } = options;
  const created = await deps.tenants.create({ name: tenant }, context).then(
    () => true,
    (error: unknown) => {
      ignoring('TENANT_EXISTS')(error);
      return false;
    },
  );
  await deps.tenantReadable();
  if (adminEmail && adminPassword) {
    await deps.firstAdmin.create(tenant, adminEmail, adminPassword, context).catch(ignoring('EMAIL_TAKEN'));
    return;
  }
  if (!created) return;
  const email = `admin@${tenant}.local`;
  const password = generatePassword();
  await deps.firstAdmin.check(tenant, password);
  await deps.firstAdmin.create(tenant, email, password, context);
  deps.announce(
    `Created the administrator of tenant "${tenant}": e-mail ${email}, password ${password} ` +
      '(shown this once; sign in with x-tenant ' + tenant + ' and change it with POST /api/auth/change-password)',
  );
}
