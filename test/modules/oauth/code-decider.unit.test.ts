import { describe, it } from 'vitest';
import { codeDecider } from '../../../src/modules/oauth/code-decider.ts';
import type { AuthorizationCodeEvent, IssuedCode } from '../../../src/modules/oauth/code-events.ts';
import { deciderSpec } from '../../support/decider-spec.ts';

const spec = deciderSpec(codeDecider);
const code: IssuedCode = {
  sessionId: 's1',
  userId: 'u1',
  clientId: 'acme.c1',
  redirectUri: 'https://app.example/cb',
  scope: ['openid'],
  nonce: 'n',
  codeChallenge: 'challenge',
  authTime: '2030-01-01T00:00:00.000Z',
  acr: 'aal1',
  amr: ['pwd'],
  codeHash: 'hash',
  expiresAt: '2030-01-01T00:01:00.000Z',
  sealedRefreshToken: 'v1.sealed',
};
const issued: AuthorizationCodeEvent = { type: 'AuthorizationCodeIssued', data: code };
const redeemed: AuthorizationCodeEvent = { type: 'AuthorizationCodeRedeemed', data: { sessionId: 's1', clientId: 'acme.c1' } };
const replayed: AuthorizationCodeEvent = { type: 'AuthorizationCodeReplayed', data: { sessionId: 's1', clientId: 'acme.c1' } };
const redeem = { type: 'RedeemCode' as const, presentedHash: 'hash', clientId: 'acme.c1', redirectUri: 'https://app.example/cb', verifierChallenge: 'challenge', now: '2030-01-01T00:00:30.000Z' };

describe('authorization code decider', () => {
  it('redeems a code once, for its client, redirect_uri and verifier, before it expires', () => {
    spec.given([issued]).when(redeem).then([redeemed]);
    spec.given([]).when(redeem).thenThrows('invalid_grant');
    spec.given([issued]).when({ ...redeem, presentedHash: 'other' }).thenThrows('invalid_grant');
    spec.given([issued]).when({ ...redeem, now: '2030-01-01T00:01:00.000Z' }).thenThrows('invalid_grant');
    spec.given([issued]).when({ ...redeem, clientId: 'acme.c2' }).thenThrows('invalid_grant');
    spec.given([issued]).when({ ...redeem, redirectUri: 'https://app.example/cb/' }).thenThrows('invalid_grant');
    spec.given([issued]).when({ ...redeem, redirectUri: null }).thenThrows('invalid_grant');
    spec.given([issued]).when({ ...redeem, verifierChallenge: 'another' }).thenThrows('invalid_grant');
    spec.given([issued]).when({ ...redeem, verifierChallenge: null }).thenThrows('invalid_grant');
  });

  it('a verifier sent for a code issued without a challenge is refused (PKCE downgrade)', () => {
    const plain: AuthorizationCodeEvent = { type: 'AuthorizationCodeIssued', data: { ...code, codeChallenge: null } };
    spec.given([plain]).when({ ...redeem, verifierChallenge: null }).then([redeemed]);
    spec.given([plain]).when(redeem).thenThrows('invalid_grant');
  });

  it('a redeemed code presented again is recorded as replayed, once', () => {
    spec.given([issued, redeemed]).when(redeem).then([replayed]);
    spec.given([issued, redeemed, replayed]).when(redeem).thenThrows('invalid_grant');
    // Only the genuine code counts as a replay: a guess is just refused.
    spec.given([issued, redeemed]).when({ ...redeem, presentedHash: 'guess' }).thenThrows('invalid_grant');
  });
});
