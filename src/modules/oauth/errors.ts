import { domainErrors, type ErrorStatuses } from '../../platform/errors.ts';

/** RFC 6749 / 8628 / 8693 error codes of the OAuth endpoints (lower case on the wire, as the RFCs spell them). */
export const errorStatuses = {
  /** Unknown client, wrong secret, or no authentication where it is required (RFC 6749 5.2). */
  invalid_request: 400,
  invalid_client: 401,
  unauthorized_client: 400,
  invalid_scope: 400,
  access_denied: 400,
  authorization_pending: 400,
  slow_down: 400,
  expired_token: 400,
  invalid_target: 400,
  unsupported_response_type: 400,
  /** prompt=none: the service keeps no browser session to sign in silently with. */
  login_required: 400,
} as const satisfies ErrorStatuses;

export const oauthError = domainErrors(errorStatuses);
