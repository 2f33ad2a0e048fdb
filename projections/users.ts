import type { PoolClient } from '../src/platform/db/pool.ts';
import type { AccountLocked, AccountUnlocked, LoginSucceeded } from '../src/modules/auth/events.ts';
import type {
  UserCreated,
  UserDeleted,
  UserDisabled,
  UserEnabled,
  UserProfileUpdated,
  UserRoleAssigned,
  UserRoleRemoved,
} from '../src/modules/users/events.ts';
import { defineProjection } from '../src/platform/projections/projection.ts';

const SEARCH = "lower(concat_ws(' ', email, username, first_name, last_name))";

async function setEnabled(tx: PoolClient, tenant: string, userId: string, enabled: boolean, at: string): Promise<void> {
  await tx.query('update users set enabled = $3, updated_at = $4 where tenant_id = $1 and id = $2', [tenant, userId, enabled, at]);
}

/** Read models `users` and `user_roles` (migration 0004). */
export const usersProjection = defineProjection({
  name: 'users',
  tables: ['users', 'user_roles'],
  handlers: {
    UserCreated: async (event, tx) => {
      const d = event.data as UserCreated['data'];
      const { tenantId, occurredAt } = event.metadata;
      await tx.query(
        `insert into users (tenant_id, id, email, username, first_name, last_name, enabled, email_verified, created_at, updated_at, search)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9, lower(concat_ws(' ', $3::text, $4::text, $5::text, $6::text)))
         on conflict do nothing`,
        [tenantId, d.userId, d.email, d.username, d.firstName, d.lastName, d.enabled, d.emailVerified, occurredAt],
      );
      for (const role of d.roles) {
        await tx.query('insert into user_roles values ($1, $2, $3) on conflict do nothing', [tenantId, d.userId, role.id]);
      }
    },
    UserProfileUpdated: async (event, tx) => {
      const { userId, ...changes } = event.data as UserProfileUpdated['data'];
      const columns = { email: 'email', username: 'username', firstName: 'first_name', lastName: 'last_name' } as const;
      const entries = Object.entries(changes).filter(([key]) => key in columns) as [keyof typeof columns, string | null][];
      const sets = entries.map(([key], i) => `${columns[key]} = $${i + 4}`);
      await tx.query(
        `update users set ${[...sets, 'updated_at = $3'].join(', ')} where tenant_id = $1 and id = $2`,
        [event.metadata.tenantId, userId, event.metadata.occurredAt, ...entries.map(([, value]) => value)],
      );
      await tx.query(`update users set search = ${SEARCH} where tenant_id = $1 and id = $2`, [event.metadata.tenantId, userId]);
    },
    UserDisabled: async (event, tx) =>
      setEnabled(tx, event.metadata.tenantId, (event.data as UserDisabled['data']).userId, false, event.metadata.occurredAt),
    UserEnabled: async (event, tx) =>
      setEnabled(tx, event.metadata.tenantId, (event.data as UserEnabled['data']).userId, true, event.metadata.occurredAt),
    UserDeleted: async (event, tx) => {
      const { userId } = event.data as UserDeleted['data'];
      await tx.query('delete from user_roles where tenant_id = $1 and user_id = $2', [event.metadata.tenantId, userId]);
      await tx.query('delete from users where tenant_id = $1 and id = $2', [event.metadata.tenantId, userId]);
    },
    UserRoleAssigned: async (event, tx) => {
      const { userId, role } = event.data as UserRoleAssigned['data'];
      await tx.query('insert into user_roles values ($1, $2, $3) on conflict do nothing', [event.metadata.tenantId, userId, role.id]);
    },
    UserRoleRemoved: async (event, tx) => {
      const { userId, role } = event.data as UserRoleRemoved['data'];
      await tx.query('delete from user_roles where tenant_id = $1 and user_id = $2 and role_id = $3', [event.metadata.tenantId, userId, role.id]);
    },
    LoginSucceeded: async (event, tx) => {
      const { userId } = event.data as LoginSucceeded['data'];
      await tx.query('update users set last_login_at = $3 where tenant_id = $1 and id = $2', [
        event.metadata.tenantId,
        userId,
        event.metadata.occurredAt,
      ]);
    },
    AccountLocked: async (event, tx) => {
      const { userId, lockedUntil } = event.data as AccountLocked['data'];
      await tx.query('update users set locked_until = $3 where tenant_id = $1 and id = $2', [event.metadata.tenantId, userId, lockedUntil]);
    },
    AccountUnlocked: async (event, tx) => {
      const { userId } = event.data as AccountUnlocked['data'];
      await tx.query('update users set locked_until = null where tenant_id = $1 and id = $2', [event.metadata.tenantId, userId]);
    },
  },
});
