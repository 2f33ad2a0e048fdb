import { z } from 'zod';
import { defineEvent, type EventOf } from '../../platform/events/define-event.ts';

/**
 * A device authorization (RFC 8628) on the stream of its user code, `oauthdevice-<USERCODE>`:
 * the verification page has no tenant, so user codes are unique across tenants (the client_id
 * names the tenant). The device code travels only as its SHA-256, the approved session's first
 * refresh token only sealed.
 */
export const deviceAuthorizationStarted = defineEvent({
  type: 'DeviceAuthorizationStarted',
  description: 'A device asked for authorization; the user approves at the verification page with the user code.',
  data: z.strictObject({ userCode: z.string(), clientId: z.string(), scope: z.array(z.string()), deviceCodeHash: z.string(), expiresAt: z.string(), interval: z.number().int() }),
  sensitive: ['deviceCodeHash'],
});
export const deviceAuthorizationApproved = defineEvent({
  type: 'DeviceAuthorizationApproved',
  description: 'The user approved the device: the session it will hold.',
  data: z.strictObject({
    userCode: z.string(),
    userId: z.string(),
    sessionId: z.string(),
    authTime: z.string(),
    acr: z.string(),
    amr: z.array(z.string()),
    sealedRefreshToken: z.string(),
  }),
  sensitive: ['sealedRefreshToken'],
});
export const deviceAuthorizationDenied = defineEvent({
  type: 'DeviceAuthorizationDenied',
  data: z.strictObject({ userCode: z.string(), userId: z.string() }),
});
export const deviceAuthorizationRedeemed = defineEvent({
  type: 'DeviceAuthorizationRedeemed',
  description: 'The device received its tokens.',
  data: z.strictObject({ userCode: z.string(), sessionId: z.string() }),
});

export const deviceAuthorizationEvents = [deviceAuthorizationStarted, deviceAuthorizationApproved, deviceAuthorizationDenied, deviceAuthorizationRedeemed];

export type DeviceAuthorizationStarted = EventOf<typeof deviceAuthorizationStarted>;
export type DeviceAuthorizationApproved = EventOf<typeof deviceAuthorizationApproved>;
export type DeviceAuthorizationEvent = EventOf<(typeof deviceAuthorizationEvents)[number]>;

export const deviceStreamId = (userCode: string): string => `oauthdevice-${userCode}`;
