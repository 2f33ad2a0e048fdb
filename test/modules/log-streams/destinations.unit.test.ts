import { afterAll, describe, expect, it } from 'vitest';
import { destinationRequest, objectKey, type LogRecord } from '../../../src/modules/log-streams/destinations.ts';
import { HttpsClient, type OutboundRequest } from '../../../src/platform/outbound/https-client.ts';

const record: LogRecord = {
  action: 'USER_CREATED',
  resource: 'user',
  resourceId: 'u1',
  status: 'success',
  userId: null,
  clientIp: null,
  userAgent: null,
  metadata: null,
  timestamp: '2026-01-01T12:00:00.000Z',
};
const payload = JSON.stringify(record);

describe('log-stream destinations', () => {
  // A real client, never used by the HTTP destinations: they only describe their request.
  const client = new HttpsClient({ allowPrivateNetworks: false, timeoutMs: 1000 });
  afterAll(() => client.close());
  const request = (type: Parameters<typeof destinationRequest>[1], config: object, platformAUrl?: string) =>
    destinationRequest({ client, platformAUrl, timeoutMs: 1000 }, type, config as never, payload) as OutboundRequest;

  it("LOG_PLATFORM_A posts to its region's documented HTTP log intake, unless IAM_LOG_PLATFORM_A_URL replaces it", () => {
    const sites = { us1: 'datadoghq.com', us3: 'us3.datadoghq.com', us5: 'us5.datadoghq.com', eu1: 'datadoghq.eu', ap1: 'ap1.datadoghq.com' };
    for (const [region, site] of Object.entries(sites)) {
      expect(request('LOG_PLATFORM_A', { apiKey: 'k', region }).url, region).toBe(`https://http-intake.logs.${site}/api/v2/logs`);
    }
    expect(request('LOG_PLATFORM_A', { apiKey: 'k', region: 'eu1' }, 'https://proxy.example/intake').url).toBe('https://proxy.example/intake');
    expect(request('LOG_PLATFORM_A', { apiKey: 'k', region: 'eu1' }).headers).toMatchObject({ 'dd-api-key': 'k', 'content-type': 'application/json' });
  });

  it('LOG_PLATFORM_B posts to {hecUrl}/services/collector/event, with or without a trailing slash', () => {
    for (const hecUrl of ['https://hec.example:8088', 'https://hec.example:8088/']) {
      expect(request('LOG_PLATFORM_B', { hecUrl, hecToken: 't' }).url).toBe('https://hec.example:8088/services/collector/event');
    }
  });

  it('OBJECT_STORE names objects {prefix}YYYY/MM/DD/HH-mm-ss-<uuid>.json in UTC', () => {
    expect(objectKey('iam-logs/', new Date('2026-03-04T05:06:07.890Z'))).toMatch(/^iam-logs\/2026\/03\/04\/05-06-07-[0-9a-f-]{36}\.json$/);
  });
});
