import type { PublicEvent } from '../../platform/bus/port.ts';
import type { LoginFailed } from '../auth/index.ts';
import type { RecordedEvent } from '../../platform/eventstore/port.ts';
import type { Role, RoleCreated, RoleUpdated } from '../roles/index.ts';
import type { UserCreated, UserProfileUpdated, UserRoleAssigned, UserRoleRemoved } from '../users/index.ts';

/** The data of user.* webhooks: the spec's user.created shape. */
export interface UserWebhookData {
  id: string;
  email: string;
  firstName: string | null;
  lastName: string | null;
  emailVerified: boolean;
  roles: string[];
  createdAt: string;
}

/** The data of role.created/updated/deleted: the role object as GET /api/roles/{id} shows it. */
type RoleWebhookData = Role;

/** Reads an aggregate's whole stream (the fan-out reads a bus batch's streams in one query). */
export type StreamReader = (streamId: string) => Promise<RecordedEvent[]>;

/** Whether the data of a webhook type is a snapshot folded from the aggregate's stream. */
export const needsHistory = (webhookType: string): boolean =>
  webhookType !== 'role.assigned' && webhookType !== 'role.unassigned' && (webhookType.startsWith('user.') || webhookType.startsWith('role.'));

/** The aggregate's events up to and including `event`: its state as of that event, whatever came later. */
async function historyUpTo(readStream: StreamReader, event: PublicEvent): Promise<RecordedEvent[]> {
  const revision = BigInt(event.revision);
  return (await readStream(event.streamId)).filter((recorded) => recorded.revision <= revision);
}

function evolveUser(user: UserWebhookData | null, recorded: RecordedEvent): UserWebhookData | null {
  if (recorded.type === 'UserCreated') {
    const data = recorded.data as UserCreated['data'];
    return {
      id: data.userId,
      email: data.email,
      firstName: data.firstName,
      lastName: data.lastName,
      emailVerified: data.emailVerified,
      roles: data.roles.map((role) => role.name),
      createdAt: recorded.metadata.occurredAt,
    };
  }
  if (!user) return user;
  switch (recorded.type) {
    case 'UserProfileUpdated': {
      const { email, firstName, lastName } = recorded.data as UserProfileUpdated['data'];
      return {
        ...user,
        email: email ?? user.email,
        firstName: firstName === undefined ? user.firstName : firstName,
        lastName: lastName === undefined ? user.lastName : lastName,
      };
    }
    case 'UserRoleAssigned': {
      const { role } = recorded.data as UserRoleAssigned['data'];
      return { ...user, roles: [...user.roles.filter((name) => name !== role.name), role.name] };
    }
    case 'UserRoleRemoved': {
      const { role } = recorded.data as UserRoleRemoved['data'];
      return { ...user, roles: user.roles.filter((name) => name !== role.name) };
    }
    default:
      return user;
  }
}

function evolveRole(role: RoleWebhookData | null, recorded: RecordedEvent): RoleWebhookData | null {
  if (recorded.type === 'RoleCreated') {
    const { roleId, name, description, color, permissions } = recorded.data as RoleCreated['data'];
    return { id: roleId, name, description, color, permissions, createdAt: recorded.metadata.occurredAt };
  }
  if (!role || recorded.type !== 'RoleUpdated') return role;
  const { roleId: _roleId, ...changes } = recorded.data as RoleUpdated['data'];
  return { ...role, ...Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined)) };
}

/**
 * The `data` of a webhook (decisions.md, Webhooks): user.* the user as of the event (the
 * user.created shape), role.* the role object, role.assigned/unassigned `{userId, roleId,
 * roleName}`, login.succeeded the event's own fields, login.failed `{userId, reason}`. Snapshots
 * fold the aggregate's stream up to the event, so a retry or a late delivery shows the same data
 * as the first.
 */
export async function webhookData(readStream: StreamReader, webhookType: string, event: PublicEvent): Promise<unknown> {
  if (webhookType === 'role.assigned' || webhookType === 'role.unassigned') {
    const { userId, role } = event.data as UserRoleAssigned['data'];
    return { userId, roleId: role.id, roleName: role.name };
  }
  if (webhookType.startsWith('user.')) return (await historyUpTo(readStream, event)).reduce(evolveUser, null);
  if (webhookType.startsWith('role.')) return (await historyUpTo(readStream, event)).reduce(evolveRole, null);
  if (webhookType === 'login.failed') {
    // Not the identifier tried on an unknown account: that may be anyone's address.
    const { userId, reason } = event.data as LoginFailed['data'];
    return { userId, reason };
  }
  return event.data;
}
