import { z } from 'zod';
import { defineEvent, type EventOf } from '../../platform/events/define-event.ts';

const userProfileFields = {
  email: z.string(),
  username: z.string().nullable(),
  firstName: z.string().nullable(),
  lastName: z.string().nullable(),
};
const PROFILE_FIELDS = Object.keys(userProfileFields);
/** The user's personal fields (what erasure turns into "[ERASED]"). */
export const USER_PERSONAL_FIELDS: readonly string[] = PROFILE_FIELDS;
/** A user's personal fields are encrypted with the user's own data key (docs/erasure.md). */
const theUser = (data: { userId: string }, metadata: { tenantId: string }) => userStreamId(metadata.tenantId, data.userId);
const roleRef = z.strictObject({ id: z.string(), name: z.string() });

/** How an account came to be: by an administrator, by self-service signup, or by an import (audit tells them apart). */
export const USER_ORIGINS = ['admin', 'signup', 'import'] as const;
export type UserOrigin = (typeof USER_ORIGINS)[number];

export const userCreated = defineEvent({
  type: 'UserCreated',
  version: 2,
  description: 'An account was created. passwordHash is an argon2id PHC string (never a clear password).',
  data: z.strictObject({
    userId: z.string(),
    ...userProfileFields,
    enabled: z.boolean(),
    emailVerified: z.boolean(),
    passwordHash: z.string().nullable(),
    roles: z.array(roleRef),
    origin: z.enum(USER_ORIGINS),
  }),
  sensitive: ['passwordHash'],
  personal: PROFILE_FIELDS,
  dataSubject: theUser,
  // Version 1 recorded an origin only for signups: every other account was created by an administrator.
  upcasters: { 1: (data) => ({ ...data, origin: data.origin ?? 'admin' }) },
});
export const userProfileUpdated = defineEvent({
  type: 'UserProfileUpdated',
  data: z.strictObject({ userId: z.string(), ...z.object(userProfileFields).partial().shape }),
  personal: PROFILE_FIELDS,
  dataSubject: theUser,
});
const userOnly = z.strictObject({ userId: z.string() });
export const userDisabled = defineEvent({ type: 'UserDisabled', data: userOnly });
export const userEnabled = defineEvent({ type: 'UserEnabled', data: userOnly });
export const userDeleted = defineEvent({
  type: 'UserDeleted',
  data: z.strictObject({ userId: z.string(), email: z.string(), username: z.string().nullable() }),
  personal: ['email', 'username'],
  dataSubject: theUser,
});
export const userErased = defineEvent({
  type: 'UserErased',
  description: "GDPR erasure: the user's data key was destroyed, so every personal field of the user's events reads \"[ERASED]\" from now on.",
  data: userOnly,
  erasesDataSubject: theUser,
});
export const userRoleAssigned = defineEvent({ type: 'UserRoleAssigned', data: z.strictObject({ userId: z.string(), role: roleRef }) });
/** Absent when an administrator removed the role; `role_deleted` when the role itself was deleted. */
export const ROLE_REMOVAL_REASONS = ['role_deleted'] as const;
export type RoleRemovalReason = (typeof ROLE_REMOVAL_REASONS)[number];
export const userRoleRemoved = defineEvent({
  type: 'UserRoleRemoved',
  data: z.strictObject({ userId: z.string(), role: roleRef, reason: z.enum(ROLE_REMOVAL_REASONS).optional() }),
});

/** `change`: by the user with the current password; `reset`: through an e-mailed link. */
export const PASSWORD_CHANGE_REASONS = ['change', 'reset'] as const;
export type PasswordChangeReason = (typeof PASSWORD_CHANGE_REASONS)[number];
export const userPasswordChanged = defineEvent({
  type: 'UserPasswordChanged',
  description: 'Ends every session of the user started with an older password, but keptSessionId (the session a change was made from).',
  data: z.strictObject({ userId: z.string(), passwordHash: z.string(), reason: z.enum(PASSWORD_CHANGE_REASONS), keptSessionId: z.string().optional() }),
  sensitive: ['passwordHash'],
});

export const userEvents = [
  userCreated,
  userProfileUpdated,
  userDisabled,
  userEnabled,
  userDeleted,
  userErased,
  userRoleAssigned,
  userRoleRemoved,
  userPasswordChanged,
];

export type UserProfile = z.infer<z.ZodObject<typeof userProfileFields>>;
export type RoleRef = z.infer<typeof roleRef>;
export type UserCreated = EventOf<typeof userCreated>;
export type UserProfileUpdated = EventOf<typeof userProfileUpdated>;
export type UserDisabled = EventOf<typeof userDisabled>;
export type UserEnabled = EventOf<typeof userEnabled>;
export type UserDeleted = EventOf<typeof userDeleted>;
export type UserErased = EventOf<typeof userErased>;
export type UserRoleAssigned = EventOf<typeof userRoleAssigned>;
export type UserRoleRemoved = EventOf<typeof userRoleRemoved>;
export type UserPasswordChanged = EventOf<typeof userPasswordChanged>;
export type UserEvent = EventOf<(typeof userEvents)[number]>;

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
