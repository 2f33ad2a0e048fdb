import type { DomainEvent } from '../../platform/commands/decider.ts';

export interface UserProfile {
  email: string;
  username: string | null;
  firstName: string | null;
  lastName: string | null;
}

/** How an account came to be, when not by an administrator (audit tells SIGNUP from USER_CREATED). */
export type UserOrigin = 'signup';

/** passwordHash is an argon2id PHC string (never a clear password); the relay and audit redact it. */
export type UserCreated = DomainEvent<
  'UserCreated',
  UserProfile & { userId: string; enabled: boolean; emailVerified: boolean; passwordHash: string | null; roles: RoleRef[]; origin?: UserOrigin }
>;
export type UserProfileUpdated = DomainEvent<'UserProfileUpdated', Partial<UserProfile> & { userId: string }>;
export type UserDisabled = DomainEvent<'UserDisabled', { userId: string }>;
export type UserEnabled = DomainEvent<'UserEnabled', { userId: string }>;
export type UserDeleted = DomainEvent<'UserDeleted', { userId: string; email: string; username: string | null }>;
export type UserRoleAssigned = DomainEvent<'UserRoleAssigned', { userId: string; role: RoleRef }>;
/** Absent when an administrator removed the role; `role_deleted` when the role itself was deleted. */
export type RoleRemovalReason = 'role_deleted';
export type UserRoleRemoved = DomainEvent<'UserRoleRemoved', { userId: string; role: RoleRef; reason?: RoleRemovalReason }>;
/** `change`: by the user with the current password; `reset`: through an e-mailed link. */
export type PasswordChangeReason = 'change' | 'reset';
export type UserPasswordChanged = DomainEvent<'UserPasswordChanged', { userId: string; passwordHash: string; reason: PasswordChangeReason }>;

export interface RoleRef {
  id: string;
  name: string;
}

export type UserEvent =
  | UserCreated
  | UserProfileUpdated
  | UserDisabled
  | UserEnabled
  | UserDeleted
  | UserRoleAssigned
  | UserRoleRemoved
  | UserPasswordChanged;

export const userStreamId = (tenant: string, userId: string): string => `user-${tenant}.${userId}`;

/** E-mail and username are unique per tenant, case-insensitively; the reservation names the owner. */
export const emailReservation = (tenant: string, email: string, userId: string) => ({
  scope: tenant,
  kind: 'email',
  value: email,
  owner: userStreamId(tenant, userId),
});
export const usernameReservation = (tenant: string, username: string, userId: string) => ({
  scope: tenant,
  kind: 'username',
  value: username,
  owner: userStreamId(tenant, userId),
});
