import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { z } from 'zod';
import { errorBody } from './envelopes.ts';

/**
 * What node's HTTP parser refuses before any route is known: headers (with the URL) past
 * HTTP_MAX_HEADER_BYTES, headers or a body not received in time, a request that is not HTTP.
 * The answer goes out on the raw socket, so its body cannot follow the route family's envelope;
 * it is the v1 body, which also satisfies the canonical one.
 */
const REFUSALS: Record<string, { status: number; code: string; message: string }> = {
  HPE_HEADER_OVERFLOW: { status: 431, code: 'HEADERS_TOO_LARGE', message: 'The request headers and URL are too large' },
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, code: 'CLIENT_TIMEOUT', message: 'The request was not received in time' },
};
const MALFORMED = { status: 400, code: 'MALFORMED_REQUEST', message: 'The request is not valid HTTP' };

/** fastify's clientErrorHandler: the refusal in the service's error body, then the connection closes. */
export function answerParserRefusal(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const refusal = REFUSALS[error.code ?? ''] ?? MALFORMED;
  const body = JSON.stringify(errorBody('v1', refusal.code, refusal.message));
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status]}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}

/** The parser's refusals every route can answer, as the OpenAPI document shows them. */
export const parserRefusalResponses = Object.fromEntries(
  [...Object.values(REFUSALS)].map(({ status, code }) => [
    status,
    z
      .object({ ok: z.literal(false), error: z.object({ code: z.literal(code), message: z.string(), details: z.array(z.never()) }) })
      .describe(`${status}: ${code} (answered by the HTTP parser, before any route is known)`),
  ]),
);
