import type { HttpServer } from './server.ts';

/** The AsyncAPI document of the events on the bus, beside the OpenAPI one: no tenant, no token. */
export function registerAsyncApiRoute(app: HttpServer, document: object): void {
  app.get('/api/asyncapi.json', { schema: { hide: true }, config: { tenant: 'none' } }, async () => document);
}
