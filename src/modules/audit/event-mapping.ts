import type { ApplicationEvent } from '../applications/index.ts';
import type { LoginEvent } from '../auth/index.ts';
import type { EmailLinkEvent } from '../email-links/index.ts';
import { tupleToString, type FgaModelEvent, type FgaTupleEvent } from '../fga/index.ts';
import type { SigningKeyEvent } from '../keys/index.ts';
import type { AuthorizationCodeEvent, DeviceAuthorizationEvent } from '../oauth/index.ts';
import type { RoleEvent } from '../roles/index.ts';
import type { SessionEvent } from '../sessions/index.ts';
import type { SettingsEvent } from '../settings/index.ts';
import type { TenantEvent } from '../tenants/index.ts';
import { USER_PERSONAL_FIELDS, type RoleRef, type UserEvent } from '../users/index.ts';
import type { WebhookEvent } from '../webhooks/index.ts';
import type { LogStreamEvent } from '../log-streams/index.ts';
import type { MfaEvent } from '../mfa/index.ts';
import type { ReservationEventType } from '../../platform/commands/reservations.ts';
import { REDACTED } from '../../platform/events/catalogue.ts';
import type { AuditAction, ResourceKind, WebhookEventType } from './vocabulary.ts';

/** Every event type the service records. */
export type KnownEventType =
  | (UserEvent | LoginEvent | EmailLinkEvent | SigningKeyEvent | RoleEvent | SessionEvent | SettingsEvent | TenantEvent | FgaModelEvent | FgaTupleEvent | WebhookEvent | ApplicationEvent | AuthorizationCodeEvent | DeviceAuthorizationEvent | LogStreamEvent | MfaEvent)['type']
  | ReservationEventType;

type DataOf<T extends KnownEventType> = Extract<
  UserEvent | LoginEvent | EmailLinkEvent | SigningKeyEvent | RoleEvent | SessionEvent | SettingsEvent | TenantEvent | FgaModelEvent | FgaTupleEvent | WebhookEvent | ApplicationEvent | AuthorizationCodeEvent | DeviceAuthorizationEvent | LogStreamEvent | MfaEvent,
  { type: T }
>['data'];

/** A resource's summary fields (metadata.before / metadata.after): never a secret in clear. */
export type Summary = Record<string, unknown>;

export interface AuditRule<Data> {
  /** Every action the event can become (the docs list them); `pick` chooses when there are several. */
  actions: readonly [AuditAction, ...AuditAction[]];
  pick?: (data: Data) => AuditAction;
  resource: ResourceKind;
  resourceId: (data: Data) => string;
  /** The webhook type the event is delivered as (spec, Webhook events); null where the catalogue has none. */
  webhook: WebhookEventType | null;
  /** The acting user, from the metadata's (null for system); a login or signup acts as the account itself. */
  actor?: (data: Data, metadataActor: string | null) => string | null;
  failure?: (data: Data) => { code: string; message: string };
  /** The resource's summary after the event, from the one before it (the projection keeps it per resource). */
  summary?: (before: Summary | null, data: Data) => Summary | null;
  /** Metadata besides before/after. */
  details?: (data: Data) => Record<string, unknown>;
  /**
   * GDPR erasure: these fields of metadata.before / metadata.after read "[ERASED]" in every earlier
   * entry of the resource (the audit log's one permitted rewrite, docs/erasure.md).
   */
  erases?: readonly string[];
}

export interface NotAudited {
  notAudited: string;
}

export type AuditMapping = { [T in Exclude<KnownEventType, ReservationEventType>]: AuditRule<DataOf<T>> | NotAudited } & {
  [T in ReservationEventType]: NotAudited;
};

const roleNames = (roles: RoleRef[]) => roles.map((role) => role.name).sort();
const userId = (data: { userId: string }) => data.userId;
const webhookId = (data: { webhookId: string }) => data.webhookId;
const applicationId = (data: { applicationId: string }) => data.applicationId;
const logStreamId = (data: { logStreamId: string }) => data.logStreamId;
/** A reason added by a reaction (role_deleted, user_deleted) or carried by the event. */
const reasonOf = (data: object): Record<string, unknown> => ('reason' in data ? { reason: data.reason } : {});
const withRoles = (before: Summary | null, change: (roles: string[]) => string[]): Summary | null =>
  before && { ...before, roles: change((before.roles as string[] | undefined) ?? []) };
const singleTuple = (d: { writes: unknown[]; deletes: unknown[] }) => d.writes.length + d.deletes.length === 1;
const merged = (before: Summary | null, changes: Summary): Summary => ({ ...before, ...changes });

/**
 * The one table from event type to audit entry and webhook type (design.md, Events and streams).
 * The audit projection, the webhook and the log-stream consumers all read it; a unit test fails
 * when an event type has no entry.
 */
export const AUDIT_MAPPING: AuditMapping = {
  UserCreated: {
    actions: ['USER_CREATED', 'SIGNUP'],
    pick: (d) => (d.origin === 'signup' ? 'SIGNUP' : 'USER_CREATED'),
    actor: (d, actor) => (d.origin === 'signup' ? d.userId : actor),
    resource: 'user',
    resourceId: userId,
    webhook: 'user.created',
    summary: (_before, d) => ({
      email: d.email,
      username: d.username,
      firstName: d.firstName,
      lastName: d.lastName,
      enabled: d.enabled,
      emailVerified: d.emailVerified,
      roles: roleNames(d.roles),
      password: d.passwordHash ? REDACTED : null,
    }),
  },
  UserProfileUpdated: {
    actions: ['USER_UPDATED'],
    resource: 'user',
    resourceId: userId,
    webhook: 'user.updated',
    summary: (before, { userId: _id, ...changes }) => merged(before, changes),
  },
  UserDisabled: { actions: ['USER_UPDATED'], resource: 'user', resourceId: userId, webhook: 'user.blocked', summary: (before) => merged(before, { enabled: false }) },
  UserEnabled: { actions: ['USER_UPDATED'], resource: 'user', resourceId: userId, webhook: 'user.unblocked', summary: (before) => merged(before, { enabled: true }) },
  UserDeleted: { actions: ['USER_DELETED'], resource: 'user', resourceId: userId, webhook: 'user.deleted', summary: () => null },
  // The deletion that precedes it (same append) is delivered as user.deleted.
  UserErased: { actions: ['USER_ERASED'], resource: 'user', resourceId: userId, webhook: null, erases: USER_PERSONAL_FIELDS },
  UserRoleAssigned: {
    actions: ['ROLE_ASSIGNMENT'],
    resource: 'user',
    resourceId: userId,
    webhook: 'role.assigned',
    summary: (before, d) => withRoles(before, (roles) => [...roles, d.role.name].sort()),
    details: (d) => ({ role: d.role }),
  },
  UserRoleRemoved: {
    actions: ['ROLE_REMOVAL'],
    resource: 'user',
    resourceId: userId,
    webhook: 'role.unassigned',
    summary: (before, d) => withRoles(before, (roles) => roles.filter((name) => name !== d.role.name)),
    details: (d) => ({ role: d.role, ...reasonOf(d) }),
  },
  UserPasswordChanged: {
    actions: ['PASSWORD_CHANGE', 'PASSWORD_RESET'],
    pick: (d) => (d.reason === 'reset' ? 'PASSWORD_RESET' : 'PASSWORD_CHANGE'),
    resource: 'user',
    resourceId: userId,
    webhook: 'user.password_changed',
    details: () => ({ passwordChanged: true }),
  },

  LoginSucceeded: {
    actions: ['LOGIN'],
    actor: userId,
    resource: 'user',
    resourceId: userId,
    webhook: 'login.succeeded',
    details: (d) => ({ sessionId: d.sessionId, method: d.method, ...(d.secondFactor ? { secondFactor: d.secondFactor } : {}) }),
  },
  LoginMfaRequired: {
    actions: ['LOGIN_MFA_REQUIRED'],
    actor: userId,
    resource: 'user',
    resourceId: userId,
    webhook: 'login.mfa_required',
    details: (d) => ({ method: d.method, availableMethods: d.methods, expiresAt: d.expiresAt }),
  },
  FactorCodeAccepted: { notAudited: 'a code checked outside a sign-in: what it allowed (TotpDisabled, same append) is audited' },
  CurrentPasswordAccepted: { notAudited: 'the current password checked outside a sign-in: what it allowed (UserPasswordChanged, same append) is audited' },
  TotpSetupStarted: { actions: ['MFA_SETUP_STARTED'], resource: 'user', resourceId: userId, webhook: null, details: () => ({ method: 'totp' }) },
  TotpEnabled: { actions: ['MFA_ENABLED'], resource: 'user', resourceId: userId, webhook: null, details: (d) => ({ method: 'totp', recoveryCodes: d.recoveryCodeHashes.length }) },
  TotpDisabled: { actions: ['MFA_DISABLED'], resource: 'user', resourceId: userId, webhook: null, details: (d) => ({ method: 'totp', with: d.proof.method }) },
  SecondFactorUsed: { notAudited: 'a code spent at sign-in: LoginSucceeded (same append) is audited as LOGIN with its secondFactor' },
  LoginFailed: {
    actions: ['LOGIN'],
    actor: (d) => d.userId,
    resource: 'user',
    // An unknown account has no id: the attempted e-mail names what was tried.
    resourceId: (d) => d.userId ?? d.email ?? '',
    webhook: 'login.failed',
    failure: (d) =>
      d.reason === 'locked'
        ? { code: 'ACCOUNT_LOCKED', message: 'Account locked after too many failed attempts' }
        : { code: 'INVALID_CREDENTIALS', message: 'Invalid email or password' },
    details: (d) => ({ reason: d.reason, ...(d.email ? { email: d.email } : {}) }),
  },
  AccountLocked: {
    actions: ['USER_LOCKED'],
    resource: 'user',
    resourceId: userId,
    webhook: null,
    details: (d) => ({ lockedUntil: d.lockedUntil, lockoutNumber: d.lockoutNumber, failures: d.failures }),
  },
  AccountUnlocked: { actions: ['USER_UNLOCKED'], resource: 'user', resourceId: userId, webhook: null, details: reasonOf },

  EmailLinkIssued: {
    notAudited: 'a link sent by e-mail changes no account; what it leads to is audited (PASSWORD_RESET, LOGIN with method magic_link)',
  },
  EmailLinkUsed: { notAudited: 'recorded in the same append as the PASSWORD_RESET or LOGIN it leads to, which is audited' },

  SigningKeyAdded: {
    actions: ['SIGNING_KEY_CREATED'],
    resource: 'signing_key',
    resourceId: (d) => d.kid,
    webhook: null,
    details: (d) => ({ alg: d.alg }),
  },

  RoleCreated: {
    actions: ['ROLE_CREATED'],
    resource: 'role',
    resourceId: (d) => d.roleId,
    webhook: 'role.created',
    summary: (_before, d) => ({ name: d.name, description: d.description, color: d.color, permissions: d.permissions }),
  },
  RoleUpdated: {
    actions: ['ROLE_UPDATED'],
    resource: 'role',
    resourceId: (d) => d.roleId,
    webhook: 'role.updated',
    summary: (before, { roleId: _id, ...changes }) => merged(before, changes),
  },
  RoleDeleted: { actions: ['ROLE_DELETED'], resource: 'role', resourceId: (d) => d.roleId, webhook: 'role.deleted', summary: () => null },

  SessionStarted: { notAudited: 'every session starts with a login, audited as LOGIN (LoginSucceeded names the session)' },
  SessionRefreshed: { notAudited: 'a routine token refresh within a live session; its start and end are audited' },
  SessionUsed: { notAudited: 'activity tick (at most once a minute per session) that only moves the idle deadline' },
  SessionRevoked: {
    actions: ['LOGOUT', 'SESSION_REVOKED'],
    pick: (d) => (d.reason === 'logout' ? 'LOGOUT' : 'SESSION_REVOKED'),
    resource: 'session',
    resourceId: (d) => d.sessionId,
    webhook: null,
    details: (d) => ({ userId: d.userId, reason: d.reason }),
  },
  SessionExpired: {
    actions: ['SESSION_EXPIRED'],
    resource: 'session',
    resourceId: (d) => d.sessionId,
    webhook: null,
    details: (d) => ({ userId: d.userId, reason: d.reason }),
  },

  SecuritySettingsUpdated: {
    actions: ['SETTINGS_UPDATED'],
    resource: 'settings',
    resourceId: (d) => d.section,
    webhook: null,
    details: (d) => ({ section: d.section, changes: d.changes }),
  },

  TenantCreated: {
    actions: ['TENANT_CREATED'],
    resource: 'tenant',
    resourceId: (d) => d.tenantId,
    webhook: null,
    summary: (_before, d) => ({ name: d.name, displayName: d.displayName }),
  },
  TenantUpdated: {
    actions: ['TENANT_UPDATED'],
    resource: 'tenant',
    resourceId: (d) => d.tenantId,
    webhook: null,
    summary: (before, d) => merged(before, { displayName: d.displayName }),
  },
  TenantDeleted: { actions: ['TENANT_DELETED'], resource: 'tenant', resourceId: (d) => d.tenantId, webhook: null, summary: () => null },

  // The DSL and schema are left out of summaries: large, and the model itself keeps them.
  FgaModelCreated: {
    actions: ['FGA_MODEL_CREATED'],
    resource: 'fga_model',
    resourceId: (d) => d.modelId,
    webhook: null,
    summary: (_before, d) => ({ name: d.name, version: d.version }),
  },
  FgaModelUpdated: {
    actions: ['FGA_MODEL_UPDATED'],
    resource: 'fga_model',
    resourceId: (d) => d.modelId,
    webhook: null,
    summary: (before, d) => merged(before, d.name === undefined ? {} : { name: d.name }),
    details: (d) => ({ dslChanged: d.dsl !== undefined }),
  },
  FgaModelActivated: {
    actions: ['FGA_MODEL_ACTIVATED'],
    resource: 'fga_model',
    resourceId: (d) => d.modelId,
    webhook: null,
    details: (d) => ({ previousModelId: d.previousModelId }),
  },
  FgaModelDeleted: { actions: ['FGA_MODEL_DELETED'], resource: 'fga_model', resourceId: (d) => d.modelId, webhook: null, summary: () => null },
  FgaTupleWritten: {
    actions: ['FGA_TUPLE_WRITTEN'],
    resource: 'fga_tuple',
    resourceId: (d) => tupleToString(d.tuple),
    webhook: null,
    details: (d) => ({ modelId: d.modelId }),
  },
  FgaTupleDeleted: { actions: ['FGA_TUPLE_DELETED'], resource: 'fga_tuple', resourceId: (d) => tupleToString(d.tuple), webhook: null },
  // One entry per request: a single change reads as the one-tuple events above, a bulk change lists its tuples.
  FgaTuplesChanged: {
    actions: ['FGA_TUPLE_WRITTEN', 'FGA_TUPLE_DELETED', 'FGA_TUPLES_CHANGED'],
    pick: (d) => (singleTuple(d) ? (d.writes.length === 1 ? 'FGA_TUPLE_WRITTEN' : 'FGA_TUPLE_DELETED') : 'FGA_TUPLES_CHANGED'),
    resource: 'fga_tuple',
    resourceId: (d) => (singleTuple(d) ? tupleToString((d.writes[0] ?? d.deletes[0])!) : `${d.writes.length} written, ${d.deletes.length} deleted`),
    webhook: null,
    details: (d) => ({
      ...(d.modelId === undefined ? {} : { modelId: d.modelId }),
      ...(singleTuple(d) ? {} : { writes: d.writes.map(tupleToString), deletes: d.deletes.map(tupleToString) }),
    }),
  },

  // Summaries leave the signing secret out: events hold it sealed, and not even its last four belong in the log.
  WebhookCreated: {
    actions: ['WEBHOOK_CREATED'],
    resource: 'webhook',
    resourceId: webhookId,
    webhook: null,
    summary: (_before, d) => ({ name: d.name, url: d.url, events: d.events, isActive: d.isActive }),
  },
  WebhookUpdated: {
    actions: ['WEBHOOK_UPDATED'],
    resource: 'webhook',
    resourceId: webhookId,
    webhook: null,
    summary: (before, { webhookId: _id, ...changes }) => merged(before, changes),
  },
  WebhookSecretRotated: {
    actions: ['WEBHOOK_SECRET_ROTATED'],
    resource: 'webhook',
    resourceId: webhookId,
    webhook: null,
    details: (d) => ({ previousSecretExpiresAt: d.previousSecretExpiresAt }),
  },
  WebhookDeactivated: {
    actions: ['WEBHOOK_DEACTIVATED'],
    resource: 'webhook',
    resourceId: webhookId,
    webhook: null,
    summary: (before) => merged(before, { isActive: false }),
    details: (d) => ({ consecutiveFailures: d.consecutiveFailures }),
  },
  WebhookDeleted: { actions: ['WEBHOOK_DELETED'], resource: 'webhook', resourceId: webhookId, webhook: null, summary: () => null },

  // Summaries leave the secret's hash out; a rotation records only that it happened.
  ApplicationCreated: {
    actions: ['APPLICATION_CREATED'],
    resource: 'application',
    resourceId: applicationId,
    webhook: 'application.created',
    summary: (_before, { applicationId: _id, secretHash: _hash, ...fields }) => fields,
  },
  ApplicationUpdated: {
    actions: ['APPLICATION_UPDATED'],
    resource: 'application',
    resourceId: applicationId,
    webhook: 'application.updated',
    summary: (before, { applicationId: _id, ...changes }) => merged(before, changes),
  },
  ApplicationSecretRotated: { actions: ['APPLICATION_SECRET_ROTATED'], resource: 'application', resourceId: applicationId, webhook: 'application.secret_rotated' },
  ApplicationDeleted: { actions: ['APPLICATION_DELETED'], resource: 'application', resourceId: applicationId, webhook: null, summary: () => null },

  AuthorizationCodeIssued: { notAudited: 'the sign-in that precedes it is audited (LOGIN with its session)' },
  AuthorizationCodeRedeemed: { notAudited: 'token issuance; the session it continues is audited' },
  // A device approval, on the page (whose sign-in is also LOGIN) or through the JSON endpoint.
  ClientSessionBound: {
    actions: ['DEVICE_APPROVED'],
    actor: userId,
    resource: 'session',
    resourceId: (d) => d.sessionId,
    webhook: null,
    details: (d) => ({ clientId: d.clientId, scope: d.scope }),
  },
  DeviceAuthorizationStarted: { notAudited: 'a device asking; nothing is granted until a user approves' },
  DeviceAuthorizationApproved: { notAudited: 'audited as DEVICE_APPROVED through ClientSessionBound, appended with it (it names the client and scope)' },
  DeviceAuthorizationDenied: { notAudited: 'nothing is granted, and the denying sign-in is audited' },
  DeviceAuthorizationRedeemed: { notAudited: 'token issuance; the session it continues is audited' },
  AuthorizationCodeReplayed: { notAudited: 'its consequence, SessionRevoked with reason authorization_code_reuse, is audited' },
  // Summaries show the configuration masked, as reads do; the sealed one never leaves the events.
  LogStreamCreated: {
    actions: ['LOG_STREAM_CREATED'],
    resource: 'log_stream',
    resourceId: logStreamId,
    webhook: null,
    summary: (_before, d) => ({ name: d.name, type: d.type, config: d.config, eventFilters: d.eventFilters, status: 'active' }),
  },
  LogStreamUpdated: {
    actions: ['LOG_STREAM_UPDATED'],
    resource: 'log_stream',
    resourceId: logStreamId,
    webhook: null,
    summary: (before, { logStreamId: _id, sealedConfig: _sealed, ...changes }) => merged(before, changes),
  },
  LogStreamStatusChanged: {
    actions: ['LOG_STREAM_PAUSED', 'LOG_STREAM_RESUMED', 'LOG_STREAM_DISABLED'],
    pick: (d) => (d.status === 'paused' ? 'LOG_STREAM_PAUSED' : d.status === 'active' ? 'LOG_STREAM_RESUMED' : 'LOG_STREAM_DISABLED'),
    resource: 'log_stream',
    resourceId: logStreamId,
    webhook: null,
    summary: (before, d) => merged(before, { status: d.status }),
    details: (d) => (d.consecutiveFailures === undefined ? {} : { consecutiveFailures: d.consecutiveFailures }),
  },
  LogStreamDeleted: { actions: ['LOG_STREAM_DELETED'], resource: 'log_stream', resourceId: logStreamId, webhook: null, summary: () => null },

  ReservationClaimed: { notAudited: "uniqueness bookkeeping appended with its owner's event, which is audited" },
  ReservationReleased: { notAudited: "uniqueness bookkeeping appended with its owner's event, which is audited" },
};

/** The rule of an event type, or null when the type is not audited (or unknown). */
export function auditRuleOf(type: string): AuditRule<never> | null {
  const entry = (AUDIT_MAPPING as Record<string, AuditRule<never> | NotAudited | undefined>)[type];
  return entry && 'actions' in entry ? entry : null;
}

/** The webhook type an event is delivered as, or null (not audited, or no webhook type). */
export function webhookTypeOf(type: string): WebhookEventType | null {
  return auditRuleOf(type)?.webhook ?? null;
}
