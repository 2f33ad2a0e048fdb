import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/platform/clock.ts';
import { PLATFORM, startTestService, type TestService } from '../../support/service.ts';

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
const AUTH_TIER_MAX = 3;

/**
 * Device-code polls are not counted in the token endpoint's auth rate-limit tier (decisions.md):
 * RFC 8628's interval governs them, with slow_down for a client polling too fast. The clock is
 * the service's (the rate limiter and slow_down both read it), moved by the test.
 */
describe('device-code polling and the auth rate-limit tier', () => {
  let t: TestService;
  const clock = new ManualClock(new Date());
  let clientId: string;

  beforeAll(async () => {
    t = await startTestService({ clock, env: { RATE_LIMIT_ENABLED: 'true', RATE_LIMIT_AUTH_MAX: String(AUTH_TIER_MAX), RATE_LIMIT_AUTH_WINDOW_S: '60' } });
    const root = await t.token({ sub: 'root', tenant: PLATFORM, roles: ['admin'] });
    clientId = (await t.request({ method: 'POST', url: '/api/applications', tenant: PLATFORM, token: root, body: { name: 'cli', type: 'native', redirectUris: ['http://127.0.0.1:8765/cb'] } })).body.data.clientId;
  });
  afterAll(() => t?.close());

  const form = (params: Record<string, string>) =>
    t.service.app.inject({ method: 'POST', url: '/api/auth/token', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams(params).toString() });
  const poll = async (deviceCode: string) => {
    const answer = await form({ grant_type: DEVICE_GRANT, device_code: deviceCode, client_id: clientId });
    return [answer.statusCode, answer.json().error ?? 'tokens'];
  };

  it('a CLI polling at the interval is never refused, a storm gets slow_down, other grants keep the auth tier', async () => {
    const started = await t.service.app.inject({
      method: 'POST',
      url: '/api/oauth/device_authorization',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ client_id: clientId, scope: 'openid' }).toString(),
    });
    const { device_code: deviceCode, interval } = started.json() as { device_code: string; interval: number };

    // Ten polls at the interval within one window of the auth tier (which admits three).
    for (let i = 0; i < 10; i += 1) {
      expect(await poll(deviceCode)).toEqual([400, 'authorization_pending']);
      clock.advance(interval * 1000);
    }
    // A storm: every poll sooner than the interval answers slow_down, none is a 429.
    await poll(deviceCode);
    for (let i = 0; i < 20; i += 1) expect(await poll(deviceCode)).toEqual([400, 'slow_down']);
    // The CLI slows down as told (interval + 5 s) and is answered again.
    clock.advance((interval + 5) * 1000);
    expect(await poll(deviceCode)).toEqual([400, 'authorization_pending']);

    // Other grants at the token endpoint are still counted in the auth tier.
    const others = [];
    for (let i = 0; i <= AUTH_TIER_MAX; i += 1) others.push((await form({ grant_type: 'refresh_token', refresh_token: 'not-a-token' })).statusCode);
    expect(others).toEqual([...Array<number>(AUTH_TIER_MAX).fill(400), 429]);
    // ... and polling goes on regardless.
    clock.advance(interval * 1000);
    expect(await poll(deviceCode)).toEqual([400, 'authorization_pending']);
  });
});
