import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.ts';
import { outboundClientFromConfig } from '../src/infrastructure.ts';

describe('outbound delivery settings', () => {
  it('parses the webhook retry schedule and refuses a malformed one by name', () => {
    expect(loadConfig({}).IAM_WEBHOOK_RETRY_SCHEDULE).toEqual([60_000, 300_000, 1_800_000, 7_200_000, 43_200_000]);
    expect(loadConfig({ IAM_WEBHOOK_RETRY_SCHEDULE: '500ms,2s' }).IAM_WEBHOOK_RETRY_SCHEDULE).toEqual([500, 2000]);
    expect(() => loadConfig({ IAM_WEBHOOK_RETRY_SCHEDULE: '1m,soon' })).toThrowError(/IAM_WEBHOOK_RETRY_SCHEDULE/);
  });

  it("defaults to the spec's limits: 30 seconds an attempt, log-stream retries from 30 seconds, internal targets refused", () => {
    const config = loadConfig({});
    expect(config.IAM_OUTBOUND_TIMEOUT_MS).toBe(30_000);
    expect(config.IAM_LOG_STREAM_RETRY_BASE_MS).toBe(30_000);
    expect(config.IAM_ALLOW_PRIVATE_NETWORK_TARGETS).toBe(false);
    expect(outboundClientFromConfig(config)).toMatchObject({ options: { timeoutMs: 30_000, allowPrivateNetworks: false } });
  });

  it('fails the start with the setting named when IAM_OUTBOUND_CA_FILE cannot be read', () => {
    const config = loadConfig({ IAM_OUTBOUND_CA_FILE: '/nonexistent/ca.pem' });
    expect(() => outboundClientFromConfig(config)).toThrowError(ConfigError);
    expect(() => outboundClientFromConfig(config)).toThrowError(/IAM_OUTBOUND_CA_FILE: cannot read \/nonexistent\/ca.pem \(ENOENT\)/);
  });
});
