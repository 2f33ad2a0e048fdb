import { GRANT_TYPES, tenantNamedByClientId, type ApplicationDirectory } from '../applications/index.ts';
import type { Grant } from '../auth/index.ts';
import { invalidGrant } from '../sessions/index.ts';
import type { SecretBox } from '../../platform/crypto/secret-box.ts';
import type { Clock } from '../../platform/clock.ts';
import { assertGrantAllowed, authenticateClient } from './client-authentication.ts';
import type { clientSessionTokens } from './client-sessions.ts';
import { parseDeviceCode, type DeviceFlow } from './device-flow.ts';
import { oauthError } from './errors.ts';

/** Polls remembered per device code (this instance), for slow_down; old entries are dropped. */
const MAX_TRACKED_POLLS = 10_000;

/**
 * grant_type=urn:ietf:params:oauth:grant-type:device_code (RFC 8628 3.4): the device polls until
 * the user decided. A poll sooner than the interval after the previous one answers slow_down
 * (RFC 8628 3.5; counted per instance, which a storm against one instance cannot get around
 * there), and the device code is spent by the poll that receives the tokens.
 */
export function deviceCodeGrant(deps: { applications: ApplicationDirectory; clock: Clock; devices: DeviceFlow; secretBox: SecretBox; tokensFor: ReturnType<typeof clientSessionTokens> }): Grant {
  const lastPoll = new Map<string, number>();
  return {
    tenantNamedBy: (params) => tenantNamedByClientId(params.client_id),
    async handle(params, tenant, context) {
      const application = await authenticateClient(deps.applications, tenant, params);
      assertGrantAllowed(application, GRANT_TYPES.deviceCode);
      const parsed = params.device_code ? parseDeviceCode(params.device_code) : null;
      if (!parsed) throw invalidGrant('Unknown device_code');
      const now = deps.clock.now().getTime();
      // Counted per device code, secret included: a poll with someone else's user code and a made-up
      // secret (the user code is on the device's screen) must not slow the genuine device down.
      const polled = params.device_code!;
      const previous = lastPoll.get(polled);
      lastPoll.delete(polled);
      lastPoll.set(polled, now);
      if (lastPoll.size > MAX_TRACKED_POLLS) lastPoll.delete(lastPoll.keys().next().value!);
      // The client's interval is 5 s; a little early is jitter, not a storm.
      if (previous !== undefined && now - previous < 4_000) throw oauthError('slow_down', 'Polling too fast: wait at least the interval (add 5 seconds)');
      const { request, approval } = await deps.devices.redeem(parsed.userCode, parsed.secret, application.clientId, context);
      lastPoll.delete(polled);
      const grant = { ...approval, clientId: request.clientId, scope: request.scope, nonce: null };
      return { response: await deps.tokensFor(tenant, grant, deps.secretBox.open(approval.sealedRefreshToken), request.scope, true, context) };
    },
  };
}
