import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { isDatabaseUnavailable } from '../db/unavailable.ts';
import { WrongExpectedVersionError } from '../eventstore/errors.ts';
import { AppError, validationError, type ErrorDetail } from '../errors.ts';
import { errorBody, type ErrorEnvelope } from './envelopes.ts';

/** Fastify's own failures (body parsing, limits) as the spec's errors. */
const FASTIFY_ERRORS: Record<string, [code: string, status: number, message: string]> = {
  FST_ERR_CTP_INVALID_JSON_BODY: ['VALIDATION_ERROR', 400, 'Malformed JSON body'],
  FST_ERR_CTP_EMPTY_JSON_BODY: ['VALIDATION_ERROR', 400, 'Empty JSON body'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: ['VALIDATION_ERROR', 400, 'Invalid Content-Length'],
  FST_ERR_CTP_BODY_TOO_LARGE: ['PAYLOAD_TOO_LARGE', 413, 'Request body is too large'],
  FST_ERR_CTP_INVALID_MEDIA_TYPE: ['UNSUPPORTED_MEDIA_TYPE', 415, 'Unsupported Content-Type'],
  FST_ERR_CTP_INVALID_TYPE: ['UNSUPPORTED_MEDIA_TYPE', 415, 'Unsupported Content-Type'],
};

/** The v1 layer answers fixed, safe messages per status (the code of the route is kept). */
const V1_MESSAGES: Record<number, [code: string, message: string]> = {
  400: ['VALIDATION_ERROR', 'The request is invalid'],
  401: ['UNAUTHORIZED', 'Authentication is required'],
  403: ['FORBIDDEN', 'You do not have permission to perform this action'],
  404: ['NOT_FOUND', 'The resource was not found'],
  405: ['METHOD_NOT_ALLOWED', 'The method is not allowed on this resource'],
  409: ['CONFLICT', 'The resource conflicts with an existing one'],
  413: ['PAYLOAD_TOO_LARGE', 'The request body is too large'],
  415: ['UNSUPPORTED_MEDIA_TYPE', 'The content type is not supported'],
  422: ['VALIDATION_ERROR', 'The request is invalid'],
  429: ['RATE_LIMITED', 'Too many requests'],
};

/** Generic codes the v1 layer replaces by its own per-status code; specific codes are kept. */
const GENERIC_CODES = new Set([
  'VALIDATION_ERROR', 'BAD_REQUEST', 'TOKEN_INVALID', 'TOKEN_EXPIRED', 'PERMISSION_DENIED',
  'NOT_FOUND', 'CONFLICT', 'RATE_LIMITED', 'RATE_LIMIT_EXCEEDED', 'INTERNAL_ERROR',
]);

function toAppError(error: FastifyError | Error): AppError {
  if (error instanceof AppError) return error;
  if (hasZodFastifySchemaValidationErrors(error)) {
    const details: ErrorDetail[] = error.validation.map((issue) => ({
      path: [error.validationContext, ...issue.instancePath.split('/').filter(Boolean)].filter(Boolean).join('.'),
      message: issue.message ?? 'Invalid value',
    }));
    return validationError('Request validation failed', details);
  }
  const fastifyCode = (error as FastifyError).code;
  const known = fastifyCode ? FASTIFY_ERRORS[fastifyCode] : undefined;
  if (known) return new AppError(known[0], known[1], known[2]);
  if (error instanceof WrongExpectedVersionError) {
    return new AppError('CONFLICT', 409, 'The resource was changed concurrently; retry the request');
  }
  if (isDatabaseUnavailable(error)) {
    return new AppError('SERVICE_UNAVAILABLE', 503, 'The database is unavailable; retry shortly', undefined, { 'retry-after': '1' });
  }
  const status = (error as FastifyError).statusCode;
  if (status && status >= 400 && status < 500) return new AppError('BAD_REQUEST', status, 'Bad request');
  return new AppError('INTERNAL_ERROR', 500, 'Internal server error');
}

export function envelopeOf(request: FastifyRequest): ErrorEnvelope {
  return request.routeOptions.config?.errorEnvelope ?? (request.url.startsWith('/api/v1/') ? 'v1' : 'canonical');
}

export function sendError(request: FastifyRequest, reply: FastifyReply, appError: AppError): FastifyReply {
  const envelope = envelopeOf(request);
  let { code, message } = appError;
  if (envelope === 'v1') {
    const [fallbackCode, safeMessage] = V1_MESSAGES[appError.status] ?? ['INTERNAL', 'Internal server error'];
    code = appError.status >= 500 ? 'INTERNAL' : GENERIC_CODES.has(code) ? fallbackCode : code;
    message = safeMessage;
  }
  if (appError.headers) void reply.headers(appError.headers);
  return reply.status(appError.status).send(errorBody(envelope, code, message, appError.details));
}

/** The one error handler: every failure leaves as the route's error envelope; 5xx are logged. */
export function errorHandler(error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const appError = toAppError(error);
  if (appError.status >= 500) request.log.error({ err: error }, 'request failed');
  else request.log.debug({ code: appError.code }, 'request rejected');
  return sendError(request, reply, appError);
}
