import { describe, expect, it } from 'vitest';
import { keyRingDecider, publishedKeys, type SigningKey } from '../../../src/modules/keys/decider.ts';
import { deciderSpec } from '../../support/decider-spec.ts';

const key = (kid: string, createdAt: string): SigningKey => ({ kid, alg: 'RS256', publicJwk: { kty: 'RSA' }, sealedPrivateKey: 'v1.x', createdAt });
const k1 = key('k1', '2026-01-01T00:00:00.000Z');
const k2 = key('k2', '2026-01-02T00:00:00.000Z');

describe('key ring decider', () => {
  const spec = deciderSpec(keyRingDecider);
  it('adds a first key only once, and rotation always adds', () => {
    spec.given([]).when({ type: 'EnsureSigningKey', key: k1 }).then([{ type: 'SigningKeyAdded', data: k1 }]);
    spec.given([{ type: 'SigningKeyAdded', data: k1 }]).when({ type: 'EnsureSigningKey', key: k2 }).then([]);
    spec.given([{ type: 'SigningKeyAdded', data: k1 }]).when({ type: 'RotateSigningKey', key: k2 }).then([{ type: 'SigningKeyAdded', data: k2 }]);
  });

  it('keeps a superseded key published until the longest token signed with it has expired', () => {
    const state = { keys: [k1, k2] };
    expect(publishedKeys(state, 'RS256', new Date('2026-01-02T12:00:00.000Z'), 86_400).map((k) => k.kid)).toEqual(['k1', 'k2']);
    expect(publishedKeys(state, 'RS256', new Date('2026-01-03T00:00:01.000Z'), 86_400).map((k) => k.kid)).toEqual(['k2']);
    expect(publishedKeys(state, 'HS256', new Date(), 86_400)).toEqual([]);
  });
});
