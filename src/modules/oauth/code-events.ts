import { z } from 'zod';
import { defineEvent, type EventOf } from '../../platform/events/define-event.ts';

/**
 * An authorization code and what it grants, on the stream of the session it started
 * (`oauthgrant-<tenant>.<sessionId>`: one code per sign-in). The code travels only as its
 * SHA-256; the session's first refresh token only sealed by the master key, so the exchange can
 * rotate it into the client's. Both stay off the bus.
 */
export const authorizationCodeIssued = defineEvent({
  type: 'AuthorizationCodeIssued',
  description: 'A user signed in through the authorization endpoint; a single-use code for the client, valid 60 seconds.',
  data: z.strictObject({
    sessionId: z.string(),
    userId: z.string(),
    clientId: z.string(),
    redirectUri: z.string(),
    scope: z.array(z.string()),
    nonce: z.string().nullable(),
    codeChallenge: z.string().nullable(),
    authTime: z.string(),
    acr: z.string(),
    amr: z.array(z.string()),
    codeHash: z.string(),
    expiresAt: z.string(),
    sealedRefreshToken: z.string(),
  }),
  sensitive: ['codeHash', 'sealedRefreshToken'],
});
export const authorizationCodeRedeemed = defineEvent({
  type: 'AuthorizationCodeRedeemed',
  description: 'The client exchanged the code for tokens.',
  data: z.strictObject({ sessionId: z.string(), clientId: z.string() }),
});
export const authorizationCodeReplayed = defineEvent({
  type: 'AuthorizationCodeReplayed',
  description: 'A spent code was presented again (RFC 6749 4.1.2): what it issued is revoked.',
  data: z.strictObject({ sessionId: z.string(), clientId: z.string() }),
});

export const clientSessionBound = defineEvent({
  type: 'ClientSessionBound',
  description: 'A session approved for a device (RFC 8628) belongs to its client and scope, as a code-flow session does.',
  data: z.strictObject({
    sessionId: z.string(),
    userId: z.string(),
    clientId: z.string(),
    scope: z.array(z.string()),
    authTime: z.string(),
    acr: z.string(),
    amr: z.array(z.string()),
  }),
});

export const authorizationCodeEvents = [authorizationCodeIssued, authorizationCodeRedeemed, authorizationCodeReplayed, clientSessionBound];

export type AuthorizationCodeIssued = EventOf<typeof authorizationCodeIssued>;
export type AuthorizationCodeEvent = EventOf<(typeof authorizationCodeEvents)[number]>;
export type IssuedCode = AuthorizationCodeIssued['data'];
/** What a client holds over a session, whether it came through a code or a device approval. */
export type ClientSessionBound = EventOf<typeof clientSessionBound>;
export type ClientGrant = ClientSessionBound['data'] & { nonce: string | null };

export const oauthGrantStreamId = (tenant: string, sessionId: string): string => `oauthgrant-${tenant}.${sessionId}`;
