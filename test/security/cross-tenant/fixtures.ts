import type { Answer, TenantWorld } from './tenant-world.ts';

/** What B's writes try to put into A's objects: A's controls must never show it. */
export const INTRUSION = 'taken-over';

/** What tenant B sends to reach tenant A's object through one route. */
export interface CrossTenantTarget {
  /** The route's path parameters by name (A's ids). */
  params?: Record<string, string>;
  /** A body the route accepts, so that validation is not what refuses the request. */
  body?: unknown;
  /**
   * The positive control, run by A after every attempt of B: a GET whose answer holds `shows`.
   * It proves the target exists (B's 404 means something) and that B's writes changed nothing.
   * Default: the route itself when it is a GET with A's admin; `as: 'platform'` for
   * platform-administration routes.
   */
  control?: { url?: string; shows: string; as?: 'platform' };
  /** What B may be answered (default: 401, 403, 404 for a route naming an object; any status below 500 for other reads). */
  refusals?: number[];
  /** An answer that grants B something of A's without quoting it (a check answering allowed). */
  grants?: (answer: Answer) => boolean;
}

export type FixtureBuilder = (a: TenantWorld) => Promise<CrossTenantTarget>;

/**
 * The fixture of every route that names an object or reads tenant data, keyed `METHOD /path` as
 * the OpenAPI document lists it; an /api/v1 route shares the entry of its /api twin. A route in
 * the document without an entry fails the matrix: add one here (build A's object through the
 * TenantWorld, adding a builder there for a new kind of object).
 */
export const crossTenantFixtures: Record<string, FixtureBuilder> = {
  // Platform administration: another tenant's admin is not a platform admin.
  'GET /api/tenants': async (a) => ({ control: { shows: a.name, as: 'platform' } }),
  'GET /api/tenants/{id}': async (a) => ({ params: { id: a.name }, control: { shows: a.name, as: 'platform' } }),
  'PUT /api/tenants/{id}': async (a) => ({ params: { id: a.name }, body: { displayName: INTRUSION }, control: { url: `/api/tenants/${a.name}`, shows: a.name, as: 'platform' } }),
  'DELETE /api/tenants/{id}': async (a) => ({ params: { id: a.name }, control: { url: `/api/tenants/${a.name}`, shows: a.name, as: 'platform' } }),

  'GET /api/roles': async (a) => ({ control: { shows: (await a.role()).name } }),
  ...objectRoutes('/api/roles/{id}', async (a) => {
    const role = await a.role();
    return { id: role.id, shows: role.name, update: { description: INTRUSION } };
  }),

  'GET /api/users': async (a) => ({ control: { shows: (await a.user()).email } }),
  ...objectRoutes('/api/users/{id}', async (a) => {
    const user = await a.user();
    return { id: user.id, shows: user.email, update: { firstName: INTRUSION } };
  }),
  'GET /api/users/{id}/roles': async (a) => {
    const { userId, roleId } = await a.userWithRole();
    return { params: { id: userId }, control: { shows: roleId } };
  },
  'POST /api/users/{id}/roles': async (a) => {
    const { userId, roleId } = await a.userWithRole();
    return { params: { id: userId }, body: { roleId }, control: { url: `/api/users/${userId}/roles`, shows: roleId } };
  },
  'DELETE /api/users/{id}/roles': async (a) => {
    const { userId, roleId } = await a.userWithRole();
    return { params: { id: userId }, body: { roleId }, control: { url: `/api/users/${userId}/roles`, shows: roleId } };
  },
  'GET /api/users/{id}/history': async (a) => {
    const user = await a.user();
    return { params: { id: user.id }, control: { shows: user.email } };
  },
  'POST /api/users/{id}/erase': async (a) => {
    const user = await a.user();
    return { params: { id: user.id }, control: { url: `/api/users/${user.id}`, shows: user.email } };
  },
  'POST /api/users/{id}/unlock': async (a) => {
    const user = await a.user();
    return { params: { id: user.id }, control: { url: `/api/users/${user.id}`, shows: user.email } };
  },

  // The caller's own token and sessions: B sees its own, never A's.
  'GET /api/auth/validate': async (a) => ({ control: { shows: a.name } }),
  'GET /api/admin/sessions': async (a) => ({ control: { shows: a.adminSessionId } }),
  // The spec answers this method with 405 whoever asks.
  'GET /api/admin/sessions/{id}': async (a) => ({ params: { id: a.adminSessionId }, refusals: [405], control: { url: '/api/admin/sessions', shows: a.adminSessionId } }),
  'DELETE /api/admin/sessions/{id}': async (a) => ({ params: { id: a.adminSessionId }, control: { url: '/api/user/security/sessions', shows: a.adminSessionId } }),
  'GET /api/user/security/sessions': async (a) => ({ control: { shows: a.adminSessionId } }),
  'DELETE /api/user/security/sessions/{id}': async (a) => ({ params: { id: a.adminSessionId }, control: { url: '/api/user/security/sessions', shows: a.adminSessionId } }),

  'GET /api/realm-settings': async (a) => ({ control: { shows: (await a.settings()).shows } }),
  'GET /api/events': async (a) => ({ control: { shows: (await a.user()).id } }),
  'GET /api/logs/audit': async (a) => ({ control: { shows: (await a.user()).id } }),

  'GET /api/fga/models': async (a) => ({ control: { shows: (await a.model()).name } }),
  ...objectRoutes('/api/fga/models/{id}', async (a) => {
    const model = await a.model();
    return { id: model.id, shows: model.name, update: { name: INTRUSION } };
  }),
  'POST /api/fga/models/{id}/activate': async (a) => {
    const model = await a.model();
    return { params: { id: model.id }, control: { url: `/api/fga/models/${model.id}`, shows: model.name } };
  },
  'GET /api/fga/tuples': async (a) => ({ control: { shows: (await a.tuple()).objectId } }),
  // Queries of A's tuples by their names: B's answer must not grant or list them.
  'POST /api/fga/check': async (a) => {
    const tuple = await a.tuple();
    return { body: tuple, grants: (answer) => answer.body?.data?.allowed === true, control: { url: '/api/fga/tuples', shows: tuple.objectId } };
  },
  'POST /api/fga/expand': async (a) => {
    const { objectType, objectId, relation } = await a.tuple();
    return { body: { objectType, objectId, relation }, control: { url: '/api/fga/tuples', shows: objectId } };
  },
  'POST /api/fga/list-objects': async (a) => {
    const { objectType, objectId, relation, subjectType, subjectId } = await a.tuple();
    return { body: { objectType, relation, subjectType, subjectId }, control: { url: '/api/fga/tuples', shows: objectId } };
  },

  'GET /api/webhooks': async (a) => ({ control: { shows: (await a.webhook()).name } }),
  ...objectRoutes('/api/webhooks/{id}', async (a) => {
    const hook = await a.webhook();
    return { id: hook.id, shows: hook.name, update: { name: INTRUSION } };
  }),
  'POST /api/webhooks/{id}/rotate-secret': async (a) => {
    const hook = await a.webhook();
    return { params: { id: hook.id }, control: { url: `/api/webhooks/${hook.id}`, shows: hook.name } };
  },
  'POST /api/webhooks/{id}/test': async (a) => {
    const hook = await a.webhook();
    return { params: { id: hook.id }, control: { url: `/api/webhooks/${hook.id}`, shows: hook.name } };
  },
  'GET /api/webhooks/{id}/deliveries': async (a) => {
    const delivery = await a.delivery();
    return { params: { id: delivery.webhookId }, control: { shows: delivery.id } };
  },
  'POST /api/webhooks/{id}/deliveries/{deliveryId}/retry': async (a) => {
    const delivery = await a.delivery();
    return { params: { id: delivery.webhookId, deliveryId: delivery.id }, control: { url: `/api/webhooks/${delivery.webhookId}/deliveries`, shows: delivery.id } };
  },

  'GET /api/log-streams': async (a) => ({ control: { shows: (await a.logStream()).name } }),
  ...objectRoutes('/api/log-streams/{id}', async (a) => {
    const stream = await a.logStream();
    return { id: stream.id, shows: stream.name, update: { name: INTRUSION } };
  }),

  'GET /api/applications': async (a) => ({ control: { shows: (await a.application()).name } }),
  ...objectRoutes('/api/applications/{id}', async (a) => {
    const app = await a.application();
    return { id: app.id, shows: app.name, update: { name: INTRUSION } };
  }),
  'POST /api/applications/{id}/rotate-secret': async (a) => {
    const app = await a.application();
    return { params: { id: app.id }, control: { url: `/api/applications/${app.id}`, shows: app.name } };
  },
};

/** GET, PUT and DELETE of one object, checked afterwards by A's GET of it. */
function objectRoutes(path: string, object: (a: TenantWorld) => Promise<{ id: string; shows: string; update: unknown }>): Record<string, FixtureBuilder> {
  const target = (method: string) => async (a: TenantWorld) => {
    const { id, shows, update } = await object(a);
    return { params: { id }, ...(method === 'PUT' ? { body: update } : {}), control: { url: path.replace('{id}', id), shows } };
  };
  return { [`GET ${path}`]: target('GET'), [`PUT ${path}`]: target('PUT'), [`DELETE ${path}`]: target('DELETE') };
}
