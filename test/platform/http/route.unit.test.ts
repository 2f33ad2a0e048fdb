import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DomainError, platformErrorStatuses } from '../../../src/platform/errors.ts';
import { okBody } from '../../../src/platform/http/envelopes.ts';
import { publicAccess, route } from '../../../src/platform/http/route.ts';
import { routeRules } from '../../../src/platform/http/rate-limit/tiers.ts';
import { createHttpServer, type HttpServer } from '../../../src/platform/http/server.ts';
import { createMetrics } from '../../../src/platform/metrics.ts';

/** The route declaration on a bare server: statuses from the error table, bodies from the family. */
/** Generous connection limits: this test is about declarations, not time. */
const LIMITS = { handlerTimeoutMs: 60_000, headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, keepAliveTimeoutMs: 5_000, maxHeaderBytes: 16_384 };

describe('route declarations', () => {
  let app: HttpServer;
  const errorStatuses = { ...platformErrorStatuses, WIDGET_TAKEN: 409 };
  const raising = (code: string) => async () => {
    throw new DomainError(code, `raised ${code}`);
  };

  beforeAll(async () => {
    app = await createHttpServer({ logger: pino({ level: 'silent' }), metrics: createMetrics(), bodyLimit: 1024, limits: LIMITS, trustProxy: false, issuer: 'http://x.test', version: '0', errorStatuses, rateLimitRules: routeRules([]) });
    const common = { tags: ['Test'], access: publicAccess, method: 'POST' as const, summary: 'test', tenant: 'none' as const };
    route(app, { ...common, url: '/widgets', body: z.strictObject({ name: z.string() }), responses: { 201: okBody(z.object({ name: z.string() })) }, handler: async (request) => ({ ok: true as const, data: { name: request.body.name } }) });
    route(app, { ...common, url: '/taken', responses: { 200: okBody(z.null()) }, errors: ['WIDGET_TAKEN'], handler: raising('WIDGET_TAKEN') });
    route(app, { ...common, url: '/taken-success', envelope: 'success', responses: { 200: okBody(z.null()) }, errors: ['WIDGET_TAKEN'], handler: raising('WIDGET_TAKEN') });
    route(app, { ...common, url: '/unmapped', responses: { 200: okBody(z.null()) }, handler: raising('NEVER_MAPPED') });
    route(app, { ...common, url: '/wrong-answer', responses: { 200: okBody(z.object({ count: z.number() })) }, handler: async () => ({ ok: true, data: { count: 'many' } }) as never });
    await app.ready();
  });
  afterAll(() => app.close());

  const post = async (url: string, body?: unknown) => {
    const response = await app.inject({ method: 'POST', url, ...(body ? { payload: body as object } : {}) });
    return { status: response.statusCode, body: response.json() };
  };

  it('sets the one declared success status', async () => {
    expect(await post('/widgets', { name: 'w' })).toEqual({ status: 201, body: { ok: true, data: { name: 'w' } } });
  });

  it("answers a domain code with the table's status in the route family's body", async () => {
    expect(await post('/taken')).toEqual({ status: 409, body: { ok: false, error: { code: 'WIDGET_TAKEN', message: 'raised WIDGET_TAKEN' } } });
    expect(await post('/taken-success')).toEqual({ status: 409, body: { success: false, error: { code: 'WIDGET_TAKEN', message: 'raised WIDGET_TAKEN' } } });
  });

  it('answers an unmapped code, and an answer its schema refuses, as 500 without details', async () => {
    expect(await post('/unmapped')).toEqual({ status: 500, body: { ok: false, error: { code: 'INTERNAL_ERROR', message: 'Internal server error' } } });
    expect((await post('/wrong-answer')).status).toBe(500);
  });

  it('refuses to register a route declaring a code the table does not map', async () => {
    const other = await createHttpServer({ logger: pino({ level: 'silent' }), metrics: createMetrics(), bodyLimit: 1024, limits: LIMITS, trustProxy: false, issuer: 'http://x.test', version: '0', errorStatuses, rateLimitRules: routeRules([]) });
    expect(() => route(other, { tags: [], access: publicAccess, method: 'GET', url: '/x', summary: 'x', responses: {}, errors: ['NOT_IN_TABLE'], handler: async () => ({}) as never })).toThrow('NOT_IN_TABLE');
    await other.close();
  });
});
