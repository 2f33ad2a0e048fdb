import { describe, expect, it } from 'vitest';
import { logStreamDecider } from '../../../src/modules/log-streams/decider.ts';
import type { LogStreamEvent } from '../../../src/modules/log-streams/events.ts';
import { fullJitterDelayMs, MAX_ATTEMPTS, RETRY_CAP_MS } from '../../../src/modules/log-streams/retry.ts';
import { maskedConfig, withStoredSecrets } from '../../../src/modules/log-streams/config.ts';
import { deciderSpec } from '../../support/decider-spec.ts';

const spec = deciderSpec(logStreamDecider);
const settings = { name: 'siem', type: 'WEBHOOK' as const, config: { url: 'https://siem.example/in' }, sealedConfig: 'v1.sealed', eventFilters: null };
const created: LogStreamEvent = { type: 'LogStreamCreated', data: { logStreamId: 's1', ...settings } };
const paused: LogStreamEvent = { type: 'LogStreamStatusChanged', data: { logStreamId: 's1', status: 'paused' } };
const failed: LogStreamEvent = { type: 'LogStreamStatusChanged', data: { logStreamId: 's1', status: 'error', consecutiveFailures: 10 } };

describe('log stream decider', () => {
  it('creates once; records only changed settings, the configuration with its new seal', () => {
    spec.given([]).when({ type: 'CreateLogStream', logStreamId: 's1', settings }).then([created]);
    spec.given([created]).when({ type: 'CreateLogStream', logStreamId: 's1', settings }).then([]);
    spec.given([created]).when({ type: 'UpdateLogStream', changes: { name: 'siem', eventFilters: ['LOGIN'] } }).then([
      { type: 'LogStreamUpdated', data: { logStreamId: 's1', eventFilters: ['LOGIN'] } },
    ]);
    spec.given([created]).when({ type: 'UpdateLogStream', changes: { config: { url: 'https://b.example' }, sealedConfig: 'v1.other' } }).then([
      { type: 'LogStreamUpdated', data: { logStreamId: 's1', config: { url: 'https://b.example' }, sealedConfig: 'v1.other' } },
    ]);
    spec.given([]).when({ type: 'UpdateLogStream', changes: { name: 'x' } }).thenThrows('NOT_FOUND');
  });

  it('pauses and resumes; repeated failures put only an active stream in error, once', () => {
    spec.given([created]).when({ type: 'SetLogStreamStatus', status: 'paused' }).then([paused]);
    spec.given([created, paused]).when({ type: 'SetLogStreamStatus', status: 'paused' }).then([]);
    spec.given([created]).when({ type: 'DisableFailingLogStream', consecutiveFailures: 10 }).then([failed]);
    spec.given([created, failed]).when({ type: 'DisableFailingLogStream', consecutiveFailures: 11 }).then([]);
    spec.given([created, paused]).when({ type: 'DisableFailingLogStream', consecutiveFailures: 10 }).then([]);
    spec.given([created, failed]).when({ type: 'SetLogStreamStatus', status: 'active' }).then([
      { type: 'LogStreamStatusChanged', data: { logStreamId: 's1', status: 'active' } },
    ]);
  });

  it('deletes with the name to release; a deleted stream is not found', () => {
    const deleted: LogStreamEvent = { type: 'LogStreamDeleted', data: { logStreamId: 's1', name: 'siem' } };
    spec.given([created]).when({ type: 'DeleteLogStream' }).then([deleted]);
    spec.given([created, deleted]).when({ type: 'DeleteLogStream' }).thenThrows('NOT_FOUND');
  });
});

describe('log stream retries and masking', () => {
  it('full jitter: uniform up to base * 2^(n-1), capped at 6 hours, none after the 8th attempt', () => {
    expect(fullJitterDelayMs(1, 30_000, () => 0.999999)).toBe(29_999);
    expect(fullJitterDelayMs(3, 30_000, () => 0.5)).toBe(60_000);
    expect(fullJitterDelayMs(7, 30 * 60_000, () => 1)).toBe(RETRY_CAP_MS);
    expect(fullJitterDelayMs(2, 30_000, () => 0)).toBe(0);
    expect(fullJitterDelayMs(MAX_ATTEMPTS, 30_000)).toBeNull();
    expect(MAX_ATTEMPTS).toBe(8);
  });

  it('masks secret members and credential headers, and a masked value sent back keeps the stored secret', () => {
    const stored = { url: 'https://x.example', headers: { Authorization: 'Bearer a', 'X-Session-Token': 't', 'X-Team': 'blue' } };
    expect(maskedConfig(stored)).toEqual({ url: 'https://x.example', headers: { Authorization: '********', 'X-Session-Token': '********', 'X-Team': 'blue' } });
    expect(maskedConfig({ apiKey: 'k', region: 'eu1' })).toEqual({ apiKey: '********', region: 'eu1' });
    expect(withStoredSecrets({ url: 'https://y.example', headers: { Authorization: '********', 'X-Team': 'red' } }, stored)).toEqual({
      url: 'https://y.example',
      headers: { Authorization: 'Bearer a', 'X-Team': 'red' },
    });
    expect(withStoredSecrets({ hecUrl: 'https://h', hecToken: '********' }, { hecToken: 'real' })).toEqual({ hecUrl: 'https://h', hecToken: 'real' });
  });
});
