/**
 * The audit log's vocabulary: action names (spec, Audit actions, plus RESOURCE_VERB names for the
 * resources the spec's table leaves out), resource kinds (decisions.md, Audit log and history) and
 * the webhook catalogue (spec, Events).
 */
export const AUDIT_ACTIONS = [
  // spec, Audit actions
  'LOGIN',
  'LOGOUT',
  'SIGNUP',
  'USER_CREATED',
  'USER_UPDATED',
  'USER_DELETED',
  'PASSWORD_CHANGE',
  'PASSWORD_RESET',
  'ROLE_CREATED',
  'ROLE_UPDATED',
  'ROLE_DELETED',
  'ROLE_ASSIGNMENT',
  'ROLE_REMOVAL',
  'PERMISSION_SYNC',
  'PERMISSION_CHECK',
  // RESOURCE_VERB names of our own (docs/audit-actions.md)
  'USER_LOCKED',
  'USER_UNLOCKED',
  'USER_ERASED',
  'LOGIN_MFA_REQUIRED',
  'MFA_SETUP_STARTED',
  'MFA_ENABLED',
  'MFA_DISABLED',
  'SESSION_REVOKED',
  'SESSION_EXPIRED',
  'DEVICE_APPROVED',
  'TENANT_CREATED',
  'TENANT_UPDATED',
  'TENANT_DELETED',
  'SETTINGS_UPDATED',
  'SIGNING_KEY_CREATED',
  'FGA_MODEL_CREATED',
  'FGA_MODEL_UPDATED',
  'FGA_MODEL_ACTIVATED',
  'FGA_MODEL_DELETED',
  'FGA_TUPLE_WRITTEN',
  'FGA_TUPLE_DELETED',
  'FGA_TUPLES_CHANGED',
  'WEBHOOK_CREATED',
  'WEBHOOK_UPDATED',
  'WEBHOOK_SECRET_ROTATED',
  'WEBHOOK_DEACTIVATED',
  'WEBHOOK_DELETED',
  'APPLICATION_CREATED',
  'APPLICATION_UPDATED',
  'APPLICATION_SECRET_ROTATED',
  'APPLICATION_DELETED',
  'LOG_STREAM_CREATED',
  'LOG_STREAM_UPDATED',
  'LOG_STREAM_PAUSED',
  'LOG_STREAM_RESUMED',
  'LOG_STREAM_DISABLED',
  'LOG_STREAM_DELETED',
] as const;

export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** Recorded by the permission-check writer, never by the projection: excluded from listings by default. */
export const PERMISSION_CHECK: AuditAction = 'PERMISSION_CHECK';

export const RESOURCE_KINDS = ['user', 'role', 'session', 'tenant', 'settings', 'signing_key', 'fga_model', 'fga_tuple', 'webhook', 'application', 'log_stream'] as const;

export type ResourceKind = (typeof RESOURCE_KINDS)[number];

/** The webhook catalogue (spec, Events, Webhook events): the types a subscription may name. */
export const WEBHOOK_EVENT_TYPES = [
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

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export const AUDIT_STATUSES = ['success', 'failure', 'pending'] as const;
export type AuditStatus = (typeof AUDIT_STATUSES)[number];
