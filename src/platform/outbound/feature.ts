import type { FollowedReadModels } from '../bus/tenant-targets.ts';
import type { SecretBox } from '../crypto/secret-box.ts';
import { validationError } from '../errors.ts';
import type { EventStore } from '../eventstore/port.ts';
import type { OutboundEngineOptions } from './engine.ts';
import { OutboundRefusedError, type HttpsClient } from './https-client.ts';

/**
 * What a feature delivering on the outbound engine (webhooks, log streams) takes from the
 * composition root beside its own settings: the engine's options but its channel, its commands'
 * event store, the read models its fan-out follows, and the box its targets' secrets are sealed in.
 */
export interface OutboundFeatureDeps extends Omit<OutboundEngineOptions, 'channel'> {
  store: EventStore;
  /** The read models (the projection runner): fan-out reads the feature's active targets from a cache they keep current. */
  readModels: FollowedReadModels;
  readModelTimeoutMs: number;
  secretBox: SecretBox;
  /** Bounds every attempt; the claim's lease outlasts it. */
  timeoutMs: number;
  /** IAM_OUTBOUND_PROBE_INTERVAL_MS: how often a failing target is probed with one of its held deliveries. */
  probeIntervalMs: number;
}

/**
 * https only, and not an address the service refuses to send to (checked again at every attempt):
 * a refusal answers 400 VALIDATION_ERROR naming the request's field `path`.
 */
export async function assertDeliverable(client: HttpsClient, url: string, path: string): Promise<void> {
  try {
    await client.checkedAddress(url);
  } catch (error) {
    if (error instanceof OutboundRefusedError) throw validationError(`${path}: ${error.message}`, [{ path, message: error.message }]);
    throw error;
  }
}
