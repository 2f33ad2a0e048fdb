import { describe, it } from 'vitest';
import { deviceDecider } from '../../../src/modules/oauth/device-decider.ts';
import type { DeviceAuthorizationEvent } from '../../../src/modules/oauth/device-events.ts';
import { deciderSpec } from '../../support/decider-spec.ts';

const spec = deciderSpec(deviceDecider);
const request = {
  userCode: 'BCDFGHJK',
  clientId: 'acme.c1',
  scope: ['openid'],
  deviceCodeHash: 'hash',
  expiresAt: '2030-01-01T00:10:00.000Z',
  interval: 5,
};
const approval = { userId: 'u1', sessionId: 's1', authTime: '2030-01-01T00:01:00.000Z', acr: 'aal1', amr: ['pwd'], sealedRefreshToken: 'v1.sealed' };
const started: DeviceAuthorizationEvent = { type: 'DeviceAuthorizationStarted', data: request };
const approved: DeviceAuthorizationEvent = { type: 'DeviceAuthorizationApproved', data: { userCode: 'BCDFGHJK', ...approval } };
const denied: DeviceAuthorizationEvent = { type: 'DeviceAuthorizationDenied', data: { userCode: 'BCDFGHJK', userId: 'u1' } };
const redeemed: DeviceAuthorizationEvent = { type: 'DeviceAuthorizationRedeemed', data: { userCode: 'BCDFGHJK', sessionId: 's1' } };

const poll = { type: 'PollDevice' as const, presentedHash: 'hash', clientId: 'acme.c1', now: '2030-01-01T00:02:00.000Z' };
const decide = { type: 'DecideDevice' as const, approve: true, approval, tenantOfUser: 'acme', tenantOfClient: 'acme', now: '2030-01-01T00:01:00.000Z' };

/** RFC 8628 3.5: what each poll answers, from the device authorization's state and the clock. */
describe('device authorization decider', () => {
  it('answers authorization_pending, then the approval once; a spent device code is invalid_grant', () => {
    spec.given([started]).when(poll).thenThrows('authorization_pending');
    spec.given([started, approved]).when(poll).then([redeemed]);
    spec.given([started, approved, redeemed]).when(poll).thenThrows('invalid_grant');
  });

  it('answers access_denied after a denial, and expired_token once the 600 seconds are over, approved or not', () => {
    spec.given([started, denied]).when(poll).thenThrows('access_denied');
    spec.given([started]).when({ ...poll, now: '2030-01-01T00:09:59.999Z' }).thenThrows('authorization_pending');
    spec.given([started]).when({ ...poll, now: request.expiresAt }).thenThrows('expired_token');
    // An approval not collected within the lifetime is not collected later.
    spec.given([started, approved]).when({ ...poll, now: '2030-01-01T00:09:59.999Z' }).then([redeemed]);
    spec.given([started, approved]).when({ ...poll, now: request.expiresAt }).thenThrows('expired_token');
  });

  it('knows no device code of another client, a wrong secret, or a code never started', () => {
    spec.given([started, approved]).when({ ...poll, clientId: 'acme.c2' }).thenThrows('invalid_grant');
    spec.given([started, approved]).when({ ...poll, presentedHash: 'guess' }).thenThrows('invalid_grant');
    spec.given([]).when(poll).thenThrows('invalid_grant');
  });

  it('takes one decision, before expiry, by a user of the client\'s tenant', () => {
    spec.given([started]).when(decide).then([approved]);
    spec.given([started]).when({ ...decide, approve: false }).then([denied]);
    spec.given([started, approved]).when(decide).thenThrows('NOT_FOUND');
    spec.given([started, denied]).when(decide).thenThrows('NOT_FOUND');
    spec.given([started]).when({ ...decide, now: request.expiresAt }).thenThrows('NOT_FOUND');
    spec.given([started]).when({ ...decide, tenantOfUser: 'other' }).thenThrows('NOT_FOUND');
    spec.given([]).when(decide).thenThrows('NOT_FOUND');
  });
});
