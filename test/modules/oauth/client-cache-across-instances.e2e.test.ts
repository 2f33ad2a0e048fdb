import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInstanceBeside } from '../../support/second-instance.ts';
import { PLATFORM, startTestService, type TestService } from '../../support/service.ts';

/**
 * Two service instances on one database. Clients are authenticated from each instance's
 * application cache: a change is refused at once on the instance that made it, and on the other
 * instance once its applications projection has applied the change (the projection lag).
 */
describe('OAuth clients cached across two instances', () => {
  let a: TestService;
  let b: TestService;
  /** Parameters of the statements B sends to the database. */
  const parameters: unknown[][] = [];

  beforeAll(async () => {
    a = await startTestService();
    b = await startInstanceBeside(a, (_text, values) => parameters.push(values));
  });
  afterAll(async () => {
    await b?.close();
    await b?.db.pool.end();
    await a?.close();
  });

  const bCaughtUp = async () => {
    expect(await b.service.runner.waitFor(await a.store.lastWrittenPosition(), 10_000, ['applications'])).toBe(true);
  };
  const admin = () => a.token({ sub: 'root', tenant: PLATFORM, roles: ['admin'] });
  const createM2m = async () => {
    const created = await a.request({ method: 'POST', url: '/api/applications', tenant: PLATFORM, token: await admin(), body: { name: 'robot', type: 'm2m', scopes: ['view:audit'] } });
    expect(created.status).toBe(201);
    return created.body.data as { id: string; clientId: string; clientSecret: string };
  };
  const clientCredentials = (on: TestService, clientId: string, secret: string) =>
    on.request({ method: 'POST', url: '/api/auth/token', body: { grant_type: 'client_credentials', client_id: clientId, client_secret: secret, scope: 'view:audit' } });
  /** Whether B read the application's stream while `work` ran. */
  const bReadsStreamOf = async (applicationId: string, work: () => Promise<void>) => {
    const from = parameters.length;
    await work();
    return parameters.slice(from).some((values) => values.some((value) => typeof value === 'string' && value.endsWith(applicationId)));
  };

  it('a warm instance issues tokens without reading the application, and refuses a rotated secret once it has the rotation', async () => {
    const app = await createM2m();
    await bCaughtUp();
    expect((await clientCredentials(b, app.clientId, app.clientSecret)).status).toBe(200);
    expect(
      await bReadsStreamOf(app.id, async () => {
        for (let i = 0; i < 3; i += 1) expect((await clientCredentials(b, app.clientId, app.clientSecret)).status).toBe(200);
      }),
    ).toBe(false);
    expect((await clientCredentials(a, app.clientId, app.clientSecret)).status).toBe(200);

    const rotated = await a.request({ method: 'POST', url: `/api/applications/${app.id}/rotate-secret`, tenant: PLATFORM, token: await admin() });
    expect(rotated.status).toBe(200);
    // The instance that rotated refuses the old secret at once and takes the new one.
    expect((await clientCredentials(a, app.clientId, app.clientSecret)).body.error).toBe('invalid_client');
    expect((await clientCredentials(a, app.clientId, rotated.body.data.clientSecret)).status).toBe(200);

    await bCaughtUp();
    expect((await clientCredentials(b, app.clientId, app.clientSecret)).body.error).toBe('invalid_client');
    expect((await clientCredentials(b, app.clientId, rotated.body.data.clientSecret)).status).toBe(200);
  });

  it('a client losing a scope, then deleted, is refused on both instances', async () => {
    const app = await createM2m();
    await bCaughtUp();
    expect((await clientCredentials(b, app.clientId, app.clientSecret)).status).toBe(200);
    expect((await clientCredentials(a, app.clientId, app.clientSecret)).status).toBe(200);

    const updated = await a.request({ method: 'PUT', url: `/api/applications/${app.id}`, tenant: PLATFORM, token: await admin(), body: { scopes: ['manage:users'] } });
    expect(updated.status).toBe(200);
    expect((await clientCredentials(a, app.clientId, app.clientSecret)).body.error).toBe('invalid_scope');
    await bCaughtUp();
    expect((await clientCredentials(b, app.clientId, app.clientSecret)).body.error).toBe('invalid_scope');

    expect((await a.request({ method: 'DELETE', url: `/api/applications/${app.id}`, tenant: PLATFORM, token: await admin() })).status).toBe(200);
    expect((await clientCredentials(a, app.clientId, app.clientSecret)).body.error).toBe('invalid_client');
    await bCaughtUp();
    expect((await clientCredentials(b, app.clientId, app.clientSecret)).body.error).toBe('invalid_client');
  });
});
