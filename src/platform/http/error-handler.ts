import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { isDatabaseUnavailable } from '../db/unavailable.ts';
import { WrongExpectedVersionError } from '../eventstore/errors.ts';
import { DomainError, conflict, platformError, validationError, type ErrorDetail, type ErrorStatuses } from '../errors.ts';
import { errorBody, type ErrorEnvelope } from './envelopes.ts';
import { toHttpFailure, type HttpFailure } from './error-statuses.ts';

/** Fastify's own failures (body parsing, limits) as the platform's codes. */
const FASTIFY_ERRORS: Record<string, [code: 'VALIDATION_ERROR' | 'PAYLOAD_TOO_LARGE' | 'UNSUPPORTED_MEDIA_TYPE', message: string]> = {
  FST_ERR_CTP_INVALID_JSON_BODY: ['VALIDATION_ERROR', 'Malformed JSON body'],
  FST_ERR_CTP_EMPTY_JSON_BODY: ['VALIDATION_ERROR', 'Empty JSON body'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: ['VALIDATION_ERROR', 'Invalid Content-Length'],
  FST_ERR_CTP_BODY_TOO_LARGE: ['PAYLOAD_TOO_LARGE', 'Request body is too large'],
  FST_ERR_CTP_INVALID_MEDIA_TYPE: ['UNSUPPORTED_MEDIA_TYPE', 'Unsupported Content-Type'],
  FST_ERR_CTP_INVALID_TYPE: ['UNSUPPORTED_MEDIA_TYPE', 'Unsupported Content-Type'],
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

function toDomainError(error: FastifyError | Error): DomainError | HttpFailure {
  if (error instanceof DomainError) return error;
  if (hasZodFastifySchemaValidationErrors(error)) {
    const details: ErrorDetail[] = error.validation.map((issue) => ({
      path: [error.validationContext, ...issue.instancePath.split('/').filter(Boolean)].filter(Boolean).join('.'),
      message: issue.message ?? 'Invalid value',
    }));
    return validationError('Request validation failed', details);
  }
  const fastifyCode = (error as FastifyError).code;
  const known = fastifyCode ? FASTIFY_ERRORS[fastifyCode] : undefined;
  if (known) return platformError(known[0], known[1]);
  if (error instanceof WrongExpectedVersionError) return conflict('The resource was changed concurrently; retry the request');
  if (isDatabaseUnavailable(error)) return platformError('SERVICE_UNAVAILABLE', 'The database is unavailable; retry shortly', undefined, 1);
  // Another client error fastify raised itself: its own status, a generic code.
  const status = (error as FastifyError).statusCode;
  if (status && status >= 400 && status < 500) return { status, code: 'BAD_REQUEST', message: 'Bad request' };
  return platformError('INTERNAL_ERROR', 'Internal server error');
}

export function envelopeOf(request: FastifyRequest): ErrorEnvelope {
  return request.routeOptions.config?.errorEnvelope ?? (request.url.startsWith('/api/v1/') ? 'v1' : 'canonical');
}

/**
 * The one error handler: every failure leaves with the status the error table gives its code, in
 * the route family's error envelope; 5xx are logged.
 */
export function createErrorHandling(table: ErrorStatuses) {
  function sendError(request: FastifyRequest, reply: FastifyReply, error: DomainError | HttpFailure): FastifyReply {
    const failure = error instanceof DomainError ? toHttpFailure(table, error) : error;
    const envelope = envelopeOf(request);
    let { code, message } = failure;
    if (envelope === 'v1') {
      const [fallbackCode, safeMessage] = V1_MESSAGES[failure.status] ?? ['INTERNAL', 'Internal server error'];
      code = failure.status >= 500 ? 'INTERNAL' : GENERIC_CODES.has(code) ? fallbackCode : code;
      message = safeMessage;
    }
    if (failure.headers) void reply.headers(failure.headers);
    return reply.status(failure.status).send(errorBody(envelope, code, message, failure.details));
  }

  function errorHandler(error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply): FastifyReply {
    const failure = toDomainError(error);
    const status = failure instanceof DomainError ? toHttpFailure(table, failure).status : failure.status;
    if (status >= 500) request.log.error({ err: error }, 'request failed');
    else request.log.debug({ code: failure.code }, 'request rejected');
    return sendError(request, reply, failure);
  }

  return { errorHandler, sendError };
}
