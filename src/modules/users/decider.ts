import type { Decider } from '../../platform/commands/decider.ts';
import { conflict, notFound } from '../../platform/errors.ts';
import { userError } from './errors.ts';
import type { PasswordChangeReason, RoleRef, RoleRemovalReason, UserEvent, UserOrigin, UserProfile } from './events.ts';

export interface ActiveUser extends UserProfile {
  status: 'active';
  userId: string;
  enabled: boolean;
  emailVerified: boolean;
  passwordHash: string | null;
  /** Earlier hashes, newest first (at most MAX_PASSWORD_HISTORY): passwordHistoryCount checks them. */
  passwordHistory: string[];
  /** Raised by every password change: outstanding reset links name the version they were issued for. */
  passwordVersion: number;
  /** Raised by every change of the e-mail address: outstanding e-mailed links name the version they were mailed for. */
  emailVersion: number;
  roles: RoleRef[];
}

/** The largest passwordHistoryCount the settings accept. */
export const MAX_PASSWORD_HISTORY = 24;

/** `erased`: the personal data was crypto-shredded (docs/erasure.md); a deleted user may still be erased. */
export type UserState = { status: 'absent' } | ActiveUser | { status: 'deleted'; userId: string; erased: boolean };

export type UserCommand =
  | {
      type: 'CreateUser';
      userId: string;
      profile: UserProfile;
      passwordHash: string | null;
      roles: RoleRef[];
      enabled: boolean;
      emailVerified: boolean;
      origin: UserOrigin;
    }
  | { type: 'UpdateUser'; profile: Partial<UserProfile>; enabled?: boolean | undefined }
  | { type: 'DeleteUser' }
  /** GDPR erasure: deletes the account if it still exists, then erases its personal data (once). */
  | { type: 'EraseUser' }
  | { type: 'AssignRole'; role: RoleRef }
  | { type: 'RemoveRole'; roleId: string; reason?: RoleRemovalReason | undefined }
  /** expectedCurrentHash: the hash the new password was checked against (history, current password). */
  | { type: 'ChangePassword'; passwordHash: string; reason: PasswordChangeReason; expectedCurrentHash: string | null; keptSessionId?: string };

const activeOr404 = (state: UserState): ActiveUser => {
  if (state.status !== 'active') throw notFound('User');
  return state;
};

export const userDecider: Decider<UserState, UserCommand, UserEvent> = {
  initialState: () => ({ status: 'absent' }),

  evolve(state, event) {
    switch (event.type) {
      case 'UserCreated': {
        const { userId, email, username, firstName, lastName, enabled, emailVerified, passwordHash, roles } = event.data;
        return { status: 'active', userId, email, username, firstName, lastName, enabled, emailVerified, passwordHash, passwordHistory: [], passwordVersion: 0, emailVersion: 0, roles };
      }
      case 'UserDeleted':
        return { status: 'deleted', userId: event.data.userId, erased: false };
      case 'UserErased':
        return { status: 'deleted', userId: event.data.userId, erased: true };
      default:
        if (state.status !== 'active') return state;
        switch (event.type) {
          case 'UserProfileUpdated': {
            const { userId: _id, ...profile } = event.data;
            const emailChanged = profile.email !== undefined && profile.email !== state.email;
            return { ...state, ...profile, emailVersion: state.emailVersion + (emailChanged ? 1 : 0) };
          }
          case 'UserDisabled':
            return { ...state, enabled: false };
          case 'UserEnabled':
            return { ...state, enabled: true };
          case 'UserRoleAssigned':
            return { ...state, roles: [...state.roles, event.data.role] };
          case 'UserRoleRemoved':
            return { ...state, roles: state.roles.filter((r) => r.id !== event.data.role.id) };
          case 'UserPasswordChanged':
            return {
              ...state,
              passwordHash: event.data.passwordHash,
              passwordHistory: [...(state.passwordHash ? [state.passwordHash] : []), ...state.passwordHistory].slice(0, MAX_PASSWORD_HISTORY),
              passwordVersion: state.passwordVersion + 1,
            };
          default: {
            const exhaustive: never = event;
            return exhaustive;
          }
        }
    }
  },

  decide(command, state) {
    switch (command.type) {
      case 'CreateUser': {
        if (state.status !== 'absent') throw userError('USER_EXISTS', 'User already exists');
        const { userId, profile, passwordHash, roles, enabled, emailVerified, origin } = command;
        return [{ type: 'UserCreated', data: { userId, ...profile, passwordHash, roles, enabled, emailVerified, origin } }];
      }
      case 'UpdateUser': {
        const user = activeOr404(state);
        const changed = Object.fromEntries(
          Object.entries(command.profile).filter(([key, value]) => value !== undefined && value !== user[key as keyof UserProfile]),
        ) as Partial<UserProfile>;
        const events: UserEvent[] = [];
        if (Object.keys(changed).length > 0) events.push({ type: 'UserProfileUpdated', data: { userId: user.userId, ...changed } });
        if (command.enabled === false && user.enabled) events.push({ type: 'UserDisabled', data: { userId: user.userId } });
        if (command.enabled === true && !user.enabled) events.push({ type: 'UserEnabled', data: { userId: user.userId } });
        return events;
      }
      case 'DeleteUser': {
        const user = activeOr404(state);
        return [{ type: 'UserDeleted', data: { userId: user.userId, email: user.email, username: user.username } }];
      }
      case 'EraseUser': {
        if (state.status === 'absent') throw notFound('User');
        if (state.status === 'deleted') return state.erased ? [] : [{ type: 'UserErased', data: { userId: state.userId } }];
        const { userId, email, username } = state;
        return [
          { type: 'UserDeleted', data: { userId, email, username } },
          { type: 'UserErased', data: { userId } },
        ];
      }
      case 'AssignRole': {
        const user = activeOr404(state);
        if (user.roles.some((r) => r.id === command.role.id)) return [];
        return [{ type: 'UserRoleAssigned', data: { userId: user.userId, role: command.role } }];
      }
      case 'RemoveRole': {
        const user = activeOr404(state);
        const role = user.roles.find((r) => r.id === command.roleId);
        return role ? [{ type: 'UserRoleRemoved', data: { userId: user.userId, role, ...(command.reason ? { reason: command.reason } : {}) } }] : [];
      }
      case 'ChangePassword': {
        const user = activeOr404(state);
        if (user.passwordHash !== command.expectedCurrentHash) throw conflict('The password was changed concurrently');
        const kept = command.keptSessionId ? { keptSessionId: command.keptSessionId } : {};
        return [{ type: 'UserPasswordChanged', data: { userId: user.userId, passwordHash: command.passwordHash, reason: command.reason, ...kept } }];
      }
      default: {
        const exhaustive: never = command;
        return exhaustive;
      }
    }
  },
};
