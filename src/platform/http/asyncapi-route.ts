import { z } from 'zod';
import { publicAccess, route } from './route.ts';
import type { HttpServer } from './server.ts';

/** The AsyncAPI document of the events on the bus, beside the OpenAPI one: no tenant, no token. */
export function registerAsyncApiRoute(app: HttpServer, document: object): void {
  route(app, {
    tags: ['System'],
    access: publicAccess,
    tenant: 'none',
    method: 'GET',
    url: '/api/asyncapi.json',
    summary: 'The AsyncAPI 3.0 document of the events on the Kafka topic (envelope, payloads, what is redacted)',
    responses: { 200: z.looseObject({ asyncapi: z.string(), info: z.looseObject({ title: z.string(), version: z.string() }) }) },
    handler: async () => document as never,
  });
}
