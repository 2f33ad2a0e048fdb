import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { PLATFORM, type TestService } from '../../support/service.ts';

export const FGA_MODEL = `model
  schema 1.1
type user
type doc
  relations
    define viewer: [user]`;

export interface Answer {
  status: number;
  body: any;
}

/**
 * One tenant and the objects its fixtures need, each created on first use over HTTP by the
 * tenant's own administrator (a real login, so it also has a real session). Every value that
 * identifies the tenant's data is recorded in `markers`: another tenant's answer must hold none.
 */
export class TenantWorld {
  readonly markers = new Set<string>();
  private readonly made = new Map<string, Promise<any>>();

  private constructor(
    private readonly t: TestService,
    readonly name: string,
    readonly adminToken: string,
    readonly adminSessionId: string,
    readonly webhookUrl: string,
  ) {
    this.markers.add(name);
  }

  static async create(t: TestService, platformToken: string, label: string, webhookUrl: string): Promise<TenantWorld> {
    const name = `${label}-${randomBytes(4).toString('hex')}`;
    const admin = { email: `admin@${name}.test`, password: 'Adm1n-Pa55word' };
    const tenant = await t.request({ method: 'POST', url: '/api/tenants', tenant: PLATFORM, token: platformToken, body: { name, adminEmail: admin.email, adminPassword: admin.password } });
    expect(tenant.status, JSON.stringify(tenant.body)).toBe(201);
    const login = await t.request({ method: 'POST', url: '/api/auth/login', tenant: name, body: admin });
    expect(login.status).toBe(200);
    const world = new TenantWorld(t, name, login.body.data.accessToken, login.body.data.sessionId, webhookUrl);
    world.markers.add(tenant.body.data.id);
    world.markers.add(login.body.data.sessionId);
    return world;
  }

  /** A value no other tenant holds, remembered as this tenant's. */
  distinct(label: string): string {
    const value = `${label}-${this.name}-${randomBytes(6).toString('hex')}`;
    this.markers.add(value);
    return value;
  }

  request(method: string, url: string, body?: unknown): Promise<Answer> {
    return this.t.request({ method, url, tenant: this.name, token: this.adminToken, ...(body === undefined ? {} : { body }) });
  }

  private once<T>(key: string, make: () => Promise<T>): Promise<T> {
    if (!this.made.has(key)) this.made.set(key, make());
    return this.made.get(key)!;
  }

  private async created(method: string, url: string, body: unknown, status = 201): Promise<any> {
    const answer = await this.request(method, url, body);
    expect(answer.status, `${method} ${url} in ${this.name}: ${JSON.stringify(answer.body)}`).toBe(status);
    return answer.body.data;
  }

  user(): Promise<{ id: string; email: string }> {
    return this.once('user', async () => {
      const email = `${this.distinct('victim')}@example.test`;
      const user = await this.created('POST', '/api/users', { email, password: 'Victim-Pa55word', firstName: this.distinct('first') });
      this.markers.add(user.id);
      return { id: user.id, email };
    });
  }

  role(): Promise<{ id: string; name: string }> {
    return this.once('role', async () => {
      const role = await this.created('POST', '/api/roles', { name: this.distinct('role'), permissions: ['view:audit'] });
      this.markers.add(role.id);
      return { id: role.id, name: role.name };
    });
  }

  /** A user holding the role, so role assignment routes have something to find. */
  userWithRole(): Promise<{ userId: string; roleId: string }> {
    return this.once('userWithRole', async () => {
      const [user, role] = [await this.user(), await this.role()];
      await this.created('POST', `/api/users/${user.id}/roles`, { roleId: role.id }, 200);
      return { userId: user.id, roleId: role.id };
    });
  }

  model(): Promise<{ id: string; name: string }> {
    return this.once('model', async () => {
      const model = await this.created('POST', '/api/fga/models', { name: this.distinct('model'), dsl: FGA_MODEL });
      this.markers.add(model.id);
      return { id: model.id, name: model.name };
    });
  }

  /** A tuple `doc:<objectId>#viewer@user:<subjectId>` under the active model. */
  tuple(): Promise<{ objectType: string; objectId: string; relation: string; subjectType: string; subjectId: string }> {
    return this.once('tuple', async () => {
      const model = await this.model();
      await this.created('POST', `/api/fga/models/${model.id}/activate`, undefined, 200);
      const tuple = { objectType: 'doc', objectId: this.distinct('doc'), relation: 'viewer', subjectType: 'user', subjectId: this.distinct('reader') };
      await this.created('POST', '/api/fga/tuples', tuple);
      return tuple;
    });
  }

  webhook(): Promise<{ id: string; name: string }> {
    return this.once('webhook', async () => {
      const hook = await this.created('POST', '/api/webhooks', { name: this.distinct('hook'), url: this.webhookUrl, events: ['user.created'] });
      this.markers.add(hook.id);
      return { id: hook.id, name: hook.name };
    });
  }

  delivery(): Promise<{ webhookId: string; id: string }> {
    return this.once('delivery', async () => {
      const hook = await this.webhook();
      const delivery = await this.created('POST', `/api/webhooks/${hook.id}/test`, undefined, 200);
      this.markers.add(delivery.id);
      return { webhookId: hook.id, id: delivery.id };
    });
  }

  logStream(): Promise<{ id: string; name: string }> {
    return this.once('logStream', async () => {
      const stream = await this.created('POST', '/api/log-streams', { name: this.distinct('stream'), type: 'WEBHOOK', config: { url: this.webhookUrl } });
      this.markers.add(stream.id);
      return { id: stream.id, name: stream.name };
    });
  }

  application(): Promise<{ id: string; name: string }> {
    return this.once('application', async () => {
      const app = await this.created('POST', '/api/applications', { name: this.distinct('app'), type: 'web', redirectUris: ['https://portal.example/cb'] });
      this.markers.add(app.id);
      return { id: app.id, name: app.name };
    });
  }

  /** Realm settings with a value no other tenant has: the answer's text that shows it. */
  settings(): Promise<{ shows: string }> {
    return this.once('settings', async () => {
      await this.created('PUT', '/api/realm-settings', { section: 'security', data: { passwordMinLength: 37 } }, 200);
      const shows = '"passwordMinLength":37';
      this.markers.add(shows);
      return { shows };
    });
  }
}
