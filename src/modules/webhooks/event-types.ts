/**
 * Which domain events become which webhook types (spec, Webhook events). A stand-in until the audit
 * context's one mapping table (event type -> audit action and webhook type) is merged; then this
 * file goes and the webhooks read that table.
 */
const WEBHOOK_TYPE_OF_EVENT: Record<string, string> = {
  UserCreated: 'user.created',
  UserProfileUpdated: 'user.updated',
  UserDeleted: 'user.deleted',
  UserDisabled: 'user.blocked',
  UserEnabled: 'user.unblocked',
  UserPasswordChanged: 'user.password_changed',
  UserRoleAssigned: 'role.assigned',
  UserRoleRemoved: 'role.unassigned',
  RoleCreated: 'role.created',
  RoleUpdated: 'role.updated',
  RoleDeleted: 'role.deleted',
  LoginSucceeded: 'login.succeeded',
  LoginFailed: 'login.failed',
};

export function webhookTypeOf(eventType: string): string | undefined {
  return WEBHOOK_TYPE_OF_EVENT[eventType];
}

/** The spec's catalogue: a subscription may name any of these, emitted today or not. */
export const WEBHOOK_TYPES = [
  'user.created',
  'user.updated',
  'user.deleted',
  'user.email_verified',
  'user.password_changed',
  'user.blocked',
  'user.unblocked',
  'login.succeeded',
  'login.failed',
  'login.mfa_required',
  'login.suspicious',
  'role.created',
  'role.updated',
  'role.deleted',
  'role.assigned',
  'role.unassigned',
  'organization.created',
  'organization.updated',
  'organization.deleted',
  'organization.member_added',
  'organization.member_removed',
  'organization.invitation_sent',
  'organization.invitation_accepted',
  'application.created',
  'application.updated',
  'application.secret_rotated',
] as const;

/** Names a subscription may use for another type (the audit reference's spelling). */
export const WEBHOOK_TYPE_ALIASES: Record<string, string> = { 'role.removed': 'role.unassigned' };

/** The type of the event POST /api/webhooks/{id}/test sends. */
export const TEST_WEBHOOK_TYPE = 'webhook.test';
