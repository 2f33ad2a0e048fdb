import { describe, expect, it } from 'vitest';
import { redirectUriRegistered } from '../../../src/modules/oauth/authorization-request.ts';

describe('redirect URI matching', () => {
  const web = { type: 'web' as const, redirectUris: ['https://portal.example/callback', 'http://127.0.0.1:3000/cb'] };
  const native = { type: 'native' as const, redirectUris: ['http://127.0.0.1/cb', 'http://[::1]:8765/cb?x=1', 'com.example.app:/cb'] };

  it('is exact for every client: no trailing slash, case, query, fragment or host leniency', () => {
    expect(redirectUriRegistered(web, 'https://portal.example/callback')).toBe(true);
    for (const uri of ['https://portal.example/callback/', 'https://portal.example/Callback', 'https://PORTAL.example/callback', 'https://portal.example/callback?x=1', 'https://portal.example/callback#x', 'https://portal.example:443/callback']) {
      expect([uri, redirectUriRegistered(web, uri)]).toEqual([uri, false]);
    }
    // A web client's loopback URI keeps its port.
    expect(redirectUriRegistered(web, 'http://127.0.0.1:3001/cb')).toBe(false);
  });

  it("lets a native app's loopback IP redirect URI take any port, everything else exact (RFC 8252 7.3)", () => {
    for (const uri of ['http://127.0.0.1/cb', 'http://127.0.0.1:49152/cb', 'http://127.0.0.1:1/cb', 'http://[::1]/cb?x=1', 'http://[::1]:50000/cb?x=1', 'com.example.app:/cb']) {
      expect([uri, redirectUriRegistered(native, uri)]).toEqual([uri, true]);
    }
    for (const uri of [
      'http://127.0.0.1:49152/cb/',
      'http://127.0.0.1:49152/CB',
      'http://127.0.0.1:49152/cb?x=1',
      'http://127.0.0.1:49152/cb#x',
      'http://127.0.0.1:99999/cb',
      'http://127.0.0.1:/cb',
      'http://127.0.0.1:49152@evil.example/cb',
      'http://localhost:49152/cb',
      'https://127.0.0.1:49152/cb',
      'http://127.0.0.2:49152/cb',
      'http://[::1]:50000/cb',
      'com.example.app:/cb/',
    ]) {
      expect([uri, redirectUriRegistered(native, uri)]).toEqual([uri, false]);
    }
  });
});
