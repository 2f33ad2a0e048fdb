import { beyondHeld, type Role, type RoleQueries } from '../roles/index.ts';
import type { SettingsProvider } from '../settings/index.ts';
import type { CommandContext } from '../../platform/commands/context.ts';
import { decideAppend, handleCommand, type SideAppends } from '../../platform/commands/handle-command.ts';
import { claimReservation, isReservationConflict, releaseReservation, type ReservationDeps } from '../../platform/commands/reservations.ts';
import type { DataKeys } from '../../platform/crypto/data-keys.ts';
import { notFound, platformError, validationError } from '../../platform/errors.ts';
import type { StreamAppend } from '../../platform/eventstore/port.ts';
import { newId } from '../../platform/ids.ts';
import { userDecider, type UserCommand, type UserState } from './decider.ts';
import { emailReservation, userStreamId, usernameReservation, type PasswordChangeReason, type RoleRef, type RoleRemovalReason, type UserEvent, type UserOrigin, type UserProfile } from './events.ts';
import { userError } from './errors.ts';
import { loadUser } from './load.ts';
import { assertNotRecentlyUsed, assertPasswordPolicy, type PasswordHasher } from './passwords.ts';

/** The account's lockout, kept by the login stream (auth): a current password proven here counts as a login's does. */
export interface CurrentPasswordGuard {
  /**
   * Decides the current password with the account's lockout: a locked account's is refused (423
   * ACCOUNT_LOCKED) before `proof.verify` hashes anything; a wrong one counts as a guess and throws
   * `wrong()` (ACCOUNT_LOCKED when it locks the account); a right one commits `appendsIfRight` with
   * the check, in one append.
   */
  checkCurrentPassword(
    tenant: string,
    userId: string,
    purpose: 'change_password',
    proof: { hasPassword: boolean; verify: () => Promise<boolean> },
    context: CommandContext,
    appendsIfRight: () => Promise<StreamAppend[]>,
    wrong: () => Error,
  ): Promise<void>;
}

export interface UserCommandDeps extends ReservationDeps {
  hasher: PasswordHasher;
  roles: RoleQueries;
  settings: SettingsProvider;
  /** Destroys a user's data key on erasure (crypto-shredding, docs/erasure.md). */
  dataKeys: Pick<DataKeys, 'erase'>;
  currentPassword: CurrentPasswordGuard;
}

export interface CreateUserInput {
  email: string;
  username?: string | undefined;
  firstName?: string | undefined;
  lastName?: string | undefined;
  password?: string | undefined;
  roles?: string[] | undefined;
  enabled?: boolean | undefined;
  emailVerified?: boolean | undefined;
  origin?: UserOrigin | undefined;
}

/** New users get the tenant's `user` role unless roles are given. */
const DEFAULT_ROLE = 'user';

function mapUniquenessConflict(error: unknown): never {
  if (isReservationConflict(error, 'email')) throw userError('EMAIL_TAKEN', 'A user with this email already exists');
  if (isReservationConflict(error, 'username')) throw userError('USERNAME_TAKEN', 'A user with this username already exists');
  throw error;
}

/**
 * What the caller holds, for the roles it hands on: a role whose permissions it does not all hold
 * (admin:all holds each) is PERMISSION_DENIED, so manage:users alone cannot make an administrator.
 * `null`: the service itself (a new tenant's first administrator).
 */
export type Grantor = ReadonlySet<string> | null;

function assertGrantable(grantor: Grantor, roles: readonly Pick<Role, 'name' | 'permissions'>[]): void {
  for (const role of roles) {
    const beyond = beyondHeld(grantor, role.permissions);
    if (beyond) throw platformError('PERMISSION_DENIED', `Role '${role.name}' holds ${beyond}, which you do not hold`);
  }
}

export function userCommands(deps: UserCommandDeps) {
  const run = (tenant: string, userId: string, command: UserCommand, context: CommandContext, side?: SideAppends<UserState, UserEvent>) =>
    handleCommand(deps, userDecider, userStreamId(tenant, userId), command, context, side).catch(mapUniquenessConflict);

  /** Reservation moves for a changed e-mail or username (release the old value, claim the new). */
  const moveReservations = (tenant: string, userId: string, context: CommandContext) => async (events: UserEvent[], before: UserState) => {
    const changed = events.find((e) => e.type === 'UserProfileUpdated');
    if (changed?.type !== 'UserProfileUpdated' || before.status !== 'active') return [];
    const moves = [];
    for (const [kind, reservation] of [['email', emailReservation], ['username', usernameReservation]] as const) {
      const next = changed.data[kind];
      const previous = before[kind];
      if (next === undefined || next?.toLowerCase() === previous?.toLowerCase()) continue;
      if (previous) moves.push(...(await releaseReservation(deps, reservation(tenant, previous, userId), context)));
      if (next) moves.push(...(await claimReservation(deps, reservation(tenant, next, userId), context)));
    }
    return moves;
  };

  /** A deleted (or erased) account frees its e-mail and username. */
  const releaseReservations = (tenant: string, userId: string, context: CommandContext) => async (_events: UserEvent[], before: UserState) => {
    if (before.status !== 'active') return [];
    return [
      ...(await releaseReservation(deps, emailReservation(tenant, before.email, userId), context)),
      ...(before.username ? await releaseReservation(deps, usernameReservation(tenant, before.username, userId), context) : []),
    ];
  };

  /** A caller acts on (edits, disables, deletes) only a user whose roles lie within its own permissions. */
  async function assertManageable(tenant: string, userId: string, grantor: Grantor): Promise<void> {
    if (grantor === null || grantor.has('admin:all')) return;
    const user = await loadUser(deps.store, tenant, userId);
    if (user.status !== 'active') return; // the command itself answers 404
    const held = (await deps.roles.byNames(tenant, user.roles.map((role) => role.name))).filter((role) => user.roles.some((ref) => ref.id === role.id));
    for (const role of held) {
      const beyond = beyondHeld(grantor, role.permissions);
      if (beyond) throw platformError('PERMISSION_DENIED', `This user holds ${beyond}, which you do not hold`);
    }
  }

  return {
    async resolveRoles(tenant: string, names: string[], grantor: Grantor = null): Promise<RoleRef[]> {
      const found = await deps.roles.byNames(tenant, names);
      const missing = names.filter((n) => !found.some((r) => r.name.toLowerCase() === n.toLowerCase()));
      if (missing.length > 0) {
        throw validationError(`Role with name '${missing[0]}' does not exist`, [{ path: 'body.roles', message: 'Unknown role' }]);
      }
      assertGrantable(grantor, found);
      return found.map((r) => ({ id: r.id, name: r.name }));
    },

    /** `grantor`: the permissions of the caller, who may give only roles within them (null: the service itself). */
    async create(tenant: string, input: CreateUserInput, context: CommandContext, grantor: Grantor = null) {
      if (input.password !== undefined) assertPasswordPolicy(input.password, await deps.settings.forTenant(tenant));
      // The default role is what a signup gets anyway: only roles the caller names are its gift.
      const roles = await this.resolveRoles(tenant, input.roles ?? [DEFAULT_ROLE], input.roles ? grantor : null);
      const passwordHash = input.password === undefined ? null : await deps.hasher.hash(input.password);
      const userId = newId();
      const profile: UserProfile = {
        email: input.email,
        username: input.username ?? null,
        firstName: input.firstName ?? null,
        lastName: input.lastName ?? null,
      };
      const command = { type: 'CreateUser' as const, userId, profile, passwordHash, roles, enabled: input.enabled ?? true, emailVerified: input.emailVerified ?? false, origin: input.origin ?? 'admin' };
      const result = await run(tenant, userId, command, context, async () => [
        ...(await claimReservation(deps, emailReservation(tenant, input.email, userId), context)),
        ...(input.username ? await claimReservation(deps, usernameReservation(tenant, input.username, userId), context) : []),
      ]);
      return { userId, position: result.position, user: result.state, createdAt: result.occurredAt! };
    },

    async update(tenant: string, userId: string, changes: Partial<UserProfile> & { enabled?: boolean | undefined }, context: CommandContext, grantor: Grantor = null) {
      await assertManageable(tenant, userId, grantor);
      const { enabled, ...profile } = changes;
      return run(tenant, userId, { type: 'UpdateUser', profile, enabled }, context, moveReservations(tenant, userId, context));
    },

    /** Soft delete: the events stay, the e-mail and username become free again. */
    async delete(tenant: string, userId: string, context: CommandContext, grantor: Grantor = null) {
      await assertManageable(tenant, userId, grantor);
      return run(tenant, userId, { type: 'DeleteUser' }, context, releaseReservations(tenant, userId, context));
    },

    /**
     * GDPR erasure: deletes the account if it is still active (e-mail and username released),
     * records UserErased, then destroys the user's data key. A second call appends nothing and
     * destroys the key again: it also completes an erasure interrupted between the two steps.
     */
    async erase(tenant: string, userId: string, context: CommandContext) {
      const result = await run(tenant, userId, { type: 'EraseUser' }, context, releaseReservations(tenant, userId, context));
      await deps.dataKeys.erase({ tenantId: tenant, subject: userStreamId(tenant, userId) });
      return result;
    },

    /**
     * Sets a new password after the tenant's policy and history checks. With `currentPassword` the
     * caller must prove the old one, decided with the account's lockout (`CurrentPasswordGuard`: 401
     * INVALID_CREDENTIALS for a wrong one, 423 ACCOUNT_LOCKED while locked), and the change is
     * committed with that check. `side` appends other streams atomically (session revocations, a
     * consumed reset link).
     */
    async changePassword(
      tenant: string,
      userId: string,
      input: { newPassword: string; reason: PasswordChangeReason; currentPassword?: string; keptSessionId?: string },
      context: CommandContext,
      side?: SideAppends<UserState, UserEvent>,
    ): Promise<void> {
      const user = await loadUser(deps.store, tenant, userId);
      if (user.status !== 'active') throw notFound('User');
      let checked: Promise<UserCommand> | undefined;
      // Checked once, and only once the current password is proven (a wrong one answers 401 whatever the new one).
      const change = () =>
        (checked ??= (async (): Promise<UserCommand> => {
          const settings = await deps.settings.forTenant(tenant);
          assertPasswordPolicy(input.newPassword, settings, 'body.newPassword');
          await assertNotRecentlyUsed(deps.hasher, input.newPassword, user, settings.passwordHistoryCount);
          const passwordHash = await deps.hasher.hash(input.newPassword);
          return { type: 'ChangePassword', passwordHash, reason: input.reason, expectedCurrentHash: user.passwordHash, keptSessionId: input.keptSessionId };
        })());
      const { currentPassword } = input;
      if (currentPassword === undefined) {
        await run(tenant, userId, await change(), context, side);
        return;
      }
      const proof = { hasPassword: user.passwordHash !== null, verify: async () => user.passwordHash !== null && deps.hasher.verify(user.passwordHash, currentPassword) };
      await deps.currentPassword.checkCurrentPassword(tenant, userId, 'change_password', proof, context, async () => {
        const { state, events, append } = await decideAppend(deps, userDecider, userStreamId(tenant, userId), await change(), context);
        return [append!, ...(side ? await side(events, state) : [])];
      }, () => userError('INVALID_CREDENTIALS', 'Current password is incorrect'));
    },

    async assignRole(tenant: string, userId: string, roleId: string, context: CommandContext, grantor: Grantor = null) {
      if (context.actor === userId) throw userError('SELF_ROLE_CHANGE', 'You cannot change your own roles');
      const role = await deps.roles.get(tenant, roleId);
      if (!role) throw notFound('Role');
      assertGrantable(grantor, [role]);
      return run(tenant, userId, { type: 'AssignRole', role: { id: role.id, name: role.name } }, context);
    },

    /** Taking a role away needs what giving it needs (a role that no longer exists: anyone with manage:users). */
    async removeRole(tenant: string, userId: string, roleId: string, context: CommandContext, reason?: RoleRemovalReason, grantor: Grantor = null) {
      if (context.actor === userId) throw userError('SELF_ROLE_CHANGE', 'You cannot change your own roles');
      if (grantor !== null) {
        const role = await deps.roles.get(tenant, roleId);
        if (role) assertGrantable(grantor, [role]);
      }
      return run(tenant, userId, { type: 'RemoveRole', roleId, reason }, context);
    },
  };
}

export type UserCommands = ReturnType<typeof userCommands>;
