import type { Queryable } from '../../platform/db/pool.ts';
import { isUuid } from '../../platform/ids.ts';
import type { UserState } from './decider.ts';

export interface UserSummary {
  id: string;
  email: string;
  username: string | null;
  firstName: string | null;
  lastName: string | null;
  enabled: boolean;
  emailVerified: boolean;
  createdAt: string;
  roles: string[];
}

export interface UserDetail extends UserSummary {
  phoneNumber: string | null;
  phoneNumberVerified: boolean;
  lastLoginAt: string | null;
  /** Set while failed logins keep the account locked (null otherwise). */
  lockedUntil: string | null;
  twoFactor: { totpEnabled: boolean; smsEnabled: boolean; webauthnEnabled: boolean };
}

export interface RoleView {
  id: string;
  name: string;
  description: string;
  color: string;
}

interface UserRow {
  id: string;
  email: string;
  username: string | null;
  first_name: string | null;
  last_name: string | null;
  enabled: boolean;
  email_verified: boolean;
  created_at: Date;
  roles: string[];
  phone_number: string | null;
  phone_number_verified: boolean;
  last_login_at: Date | null;
  locked_until: Date | null;
  totp_enabled: boolean;
  sms_enabled: boolean;
  webauthn_enabled: boolean;
}

const toSummary = (row: UserRow): UserSummary => ({
  id: row.id,
  email: row.email,
  username: row.username,
  firstName: row.first_name,
  lastName: row.last_name,
  enabled: row.enabled,
  emailVerified: row.email_verified,
  createdAt: row.created_at.toISOString(),
  roles: row.roles,
});

const ROLE_NAMES = `array(select r.name from user_roles ur join roles r on r.tenant_id = ur.tenant_id and r.id = ur.role_id
                           where ur.tenant_id = u.tenant_id and ur.user_id = u.id order by r.name) as roles`;

export type UserStatusFilter = 'active' | 'disabled' | 'locked';

export interface UserListQuery {
  page: number;
  limit: number;
  search?: string | undefined;
  role?: string | undefined;
  status?: UserStatusFilter | undefined;
}

const escapeLike = (text: string): string => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * The view the read model gives of a user just created, from the command's resulting state: a
 * create can answer without waiting for the projection (which may lag).
 */
export function createdUserView(state: UserState, createdAt: string): UserDetail {
  if (state.status !== 'active') throw new Error('A created user is active');
  return {
    id: state.userId,
    email: state.email,
    username: state.username,
    firstName: state.firstName,
    lastName: state.lastName,
    enabled: state.enabled,
    emailVerified: state.emailVerified,
    createdAt: new Date(createdAt).toISOString(),
    roles: state.roles.map((role) => role.name).sort(),
    phoneNumber: null,
    phoneNumberVerified: false,
    lastLoginAt: null,
    lockedUntil: null,
    twoFactor: { totpEnabled: false, smsEnabled: false, webauthnEnabled: false },
  };
}

/** Reads of the users read model; every query is scoped to one tenant. */
export function userQueries(db: Queryable, now: () => Date) {
  return {
    async list(tenant: string, query: UserListQuery): Promise<{ items: UserSummary[]; total: number }> {
      const where = ['u.tenant_id = $1'];
      const params: unknown[] = [tenant];
      if (query.search) {
        params.push(`%${escapeLike(query.search.toLowerCase())}%`);
        where.push(`u.search like $${params.length}`);
      }
      if (query.role) {
        params.push(query.role.toLowerCase());
        where.push(`exists (select 1 from user_roles ur join roles r on r.tenant_id = ur.tenant_id and r.id = ur.role_id
                            where ur.tenant_id = u.tenant_id and ur.user_id = u.id and lower(r.name) = $${params.length})`);
      }
      if (query.status === 'disabled') where.push('not u.enabled');
      if (query.status === 'locked' || query.status === 'active') {
        params.push(now());
        const at = `$${params.length}`;
        where.push(query.status === 'locked' ? `u.locked_until > ${at}` : `u.enabled and (u.locked_until is null or u.locked_until <= ${at})`);
      }
      const filter = where.join(' and ');
      const [{ rows }, count] = await Promise.all([
        db.query<UserRow>(
          `select u.*, ${ROLE_NAMES} from users u where ${filter}
            order by u.created_at desc, u.id desc limit ${query.limit} offset ${(query.page - 1) * query.limit}`,
          params,
        ),
        db.query<{ total: string }>(`select count(*) as total from users u where ${filter}`, params),
      ]);
      return { items: rows.map(toSummary), total: Number(count.rows[0]?.total ?? 0) };
    },

    async get(tenant: string, userId: string): Promise<UserDetail | null> {
      if (!isUuid(userId)) return null;
      const { rows } = await db.query<UserRow>(`select u.*, ${ROLE_NAMES} from users u where u.tenant_id = $1 and u.id = $2`, [tenant, userId]);
      const row = rows[0];
      if (!row) return null;
      return {
        ...toSummary(row),
        phoneNumber: row.phone_number,
        phoneNumberVerified: row.phone_number_verified,
        lastLoginAt: row.last_login_at?.toISOString() ?? null,
        lockedUntil: row.locked_until && row.locked_until > now() ? row.locked_until.toISOString() : null,
        twoFactor: { totpEnabled: row.totp_enabled, smsEnabled: row.sms_enabled, webauthnEnabled: row.webauthn_enabled },
      };
    },

    async roles(tenant: string, userId: string): Promise<RoleView[]> {
      if (!isUuid(userId)) return [];
      const { rows } = await db.query<RoleView>(
        `select r.id, r.name, r.description, r.color from user_roles ur
           join roles r on r.tenant_id = ur.tenant_id and r.id = ur.role_id
          where ur.tenant_id = $1 and ur.user_id = $2 order by r.name`,
        [tenant, userId],
      );
      return rows;
    },

    /** Every user holding a role (the role-deleted reaction's targets). */
    async holdersOf(tenant: string, roleId: string): Promise<string[]> {
      const { rows } = await db.query<{ user_id: string }>('select user_id from user_roles where tenant_id = $1 and role_id = $2 order by user_id', [tenant, roleId]);
      return rows.map((r) => r.user_id);
    },
  };
}

export type UserQueries = ReturnType<typeof userQueries>;
