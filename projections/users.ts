import type { AccountLocked, AccountUnlocked, LoginSucceeded } from '../src/modules/auth/index.ts';
import type { TotpDisabled, TotpEnabled } from '../src/modules/mfa/index.ts';
import type { UserCreated, UserDeleted, UserDisabled, UserEnabled, UserPasswordChanged, UserProfileUpdated, UserRoleAssigned, UserRoleRemoved } from '../src/modules/users/index.ts';
import type { PoolClient } from '../src/platform/db/pool.ts';
import { defineProjection } from '../src/platform/projections/projection.ts';

const SEARCH = "lower(concat_ws(' ', email, username, first_name, last_name))";

async function setTotp(tx: PoolClient, tenant: string, userId: string, enabled: boolean): Promise<void> {
  await tx.query('update users set totp_enabled = $3 where tenant_id = $1 and id = $2', [tenant, userId, enabled]);
}

async function setEnabled(tx: PoolClient, tenant: string, userId: string, enabled: boolean, at: string): Promise<void> {
  await tx.query('update users set enabled = $3, updated_at = $4 where tenant_id = $1 and id = $2', [tenant, userId, enabled, at]);
}

/** Read models `users` and `user_roles` (migration 0004). */
export const usersProjection = defineProjection({
  name: 'users',
  tables: ['users', 'user_roles'],
  handlers: {
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
    // The record changed (as updatedAt shows), and the users cache drops the user on it: the password's version is in the cache.
    UserPasswordChanged: async (event, tx) => {
      const { userId } = event.data as UserPasswordChanged['data'];
      await tx.query('update users set updated_at = $3 where tenant_id = $1 and id = $2', [event.metadata.tenantId, userId, event.metadata.occurredAt]);
    },
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
    AccountLocked: async (event, tx) => {
      const { userId, lockedUntil } = event.data as AccountLocked['data'];
      await tx.query('update users set locked_until = $3 where tenant_id = $1 and id = $2', [event.metadata.tenantId, userId, lockedUntil]);
    },
    TotpEnabled: async (event, tx) => setTotp(tx, event.metadata.tenantId, (event.data as TotpEnabled['data']).userId, true),
    TotpDisabled: async (event, tx) => setTotp(tx, event.metadata.tenantId, (event.data as TotpDisabled['data']).userId, false),
    AccountUnlocked: async (event, tx) => {
      const { userId } = event.data as AccountUnlocked['data'];
      await tx.query('update users set locked_until = null where tenant_id = $1 and id = $2', [event.metadata.tenantId, userId]);
    },
  },
  // Sign-ups and imports: the hot events.
  batchHandlers: {
    UserCreated: async (events, tx) => {
      const created = events.map((event) => ({ tenantId: event.metadata.tenantId, at: event.metadata.occurredAt, ...(event.data as UserCreated['data']) }));
      await tx.query(
        `insert into users (tenant_id, id, email, username, first_name, last_name, enabled, email_verified, created_at, updated_at, search)
         select u.tenant_id, u.id, u.email, u.username, u.first_name, u.last_name, u.enabled, u.email_verified, u.at, u.at,
                lower(concat_ws(' ', u.email, u.username, u.first_name, u.last_name))
           from unnest($1::text[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[], $7::boolean[], $8::boolean[], $9::timestamptz[])
                with ordinality as u(tenant_id, id, email, username, first_name, last_name, enabled, email_verified, at, n)
          order by u.n
         on conflict do nothing`,
        [
          created.map((d) => d.tenantId),
          created.map((d) => d.userId),
          created.map((d) => d.email),
          created.map((d) => d.username),
          created.map((d) => d.firstName),
          created.map((d) => d.lastName),
          created.map((d) => d.enabled),
          created.map((d) => d.emailVerified),
          created.map((d) => d.at),
        ],
      );
      const roles = created.flatMap((d) => d.roles.map((role) => [d.tenantId, d.userId, role.id] as const));
      if (roles.length === 0) return;
      await tx.query('insert into user_roles select * from unnest($1::text[], $2::uuid[], $3::uuid[]) on conflict do nothing', [
        roles.map((r) => r[0]),
        roles.map((r) => r[1]),
        roles.map((r) => r[2]),
      ]);
    },
  },
  // Logins: the hot event, its statement sent with the group's opening.
  batchWrites: {
    // The last login of each user in the run is the one that stays.
    LoginSucceeded: (events) => {
      const last = new Map(events.map((event) => [`${event.metadata.tenantId}\n${(event.data as LoginSucceeded['data']).userId}`, event]));
      const logins = [...last.values()];
      return [
        {
          text: `update users set last_login_at = l.at
           from unnest($1::text[], $2::uuid[], $3::timestamptz[]) as l(tenant_id, id, at)
          where users.tenant_id = l.tenant_id and users.id = l.id`,
          values: [
            logins.map((event) => event.metadata.tenantId),
            logins.map((event) => (event.data as LoginSucceeded['data']).userId),
            logins.map((event) => event.metadata.occurredAt),
          ],
        },
      ];
    },
  },
});
