import { exportJWK, generateKeyPair, type JWK } from 'jose';
import { createPrivateKey, createPublicKey, createSecretKey, randomBytes, type JsonWebKey, type KeyObject } from 'node:crypto';
import type { Clock } from '../../platform/clock.ts';
import { systemContext } from '../../platform/commands/context.ts';
import { fold } from '../../platform/commands/decider.ts';
import { handleCommand } from '../../platform/commands/handle-command.ts';
import type { SecretBox } from '../../platform/crypto/secret-box.ts';
import type { EventStore } from '../../platform/eventstore/port.ts';
import { newId } from '../../platform/ids.ts';
import { keyRingDecider, publishedKeys, type KeyRingState, type SigningKey } from './decider.ts';
import { SIGNING_KEYS_STREAM, type SigningAlgorithm, type SigningKeyEvent } from './events.ts';

/** The bound of accessTokenExpiry: no token outlives a superseded key by more than this. */
export const MAX_ACCESS_TOKEN_SECONDS = 86_400;
const RELOAD_INTERVAL_MS = 60_000;
/** A reload asked for a key this instance may not know yet (an unknown kid, the JWKS) reads the stream at most this often. */
export const KEY_RECHECK_MS = 1000;

/**
 * ID tokens are always RS256, whatever signs access tokens: a client verifies them with the JWKS
 * (an HS256 ID token would need the client's secret as its key, and secrets are stored hashed).
 */
export const ID_TOKEN_ALG = 'RS256' satisfies SigningAlgorithm;

/** A key ready to sign: node:crypto key objects made once per kid. */
export interface SigningKeyPair {
  kid: string;
  alg: SigningAlgorithm;
  key: KeyObject;
}

/**
 * The signing keys of the service, event-sourced in one stream and cached here: keys of the
 * configured access-token algorithm, and RS256 keys for ID tokens (the same keys when RS256 is
 * configured). Other instances' rotations are picked up by a periodic reload and whenever a token
 * names an unknown kid.
 */
export class KeyRing {
  private state: KeyRingState = { keys: [] };
  private imported = new Map<string, { verify: KeyObject; sign: KeyObject }>();
  private loadedAt = 0;

  constructor(
    private readonly deps: { store: EventStore; clock: Clock; secretBox: SecretBox },
    readonly alg: SigningAlgorithm,
    private readonly platformTenant: string,
  ) {}

  async start(): Promise<void> {
    await this.reload();
    const missing = this.algorithms().filter((alg) => !this.state.keys.some((k) => k.alg === alg));
    for (const alg of missing) {
      const command = { type: 'EnsureSigningKey' as const, key: await this.generate(alg) };
      await handleCommand(this.deps, keyRingDecider, SIGNING_KEYS_STREAM, command, systemContext(this.platformTenant));
    }
    if (missing.length > 0) await this.reload();
  }

  /** Rotates every algorithm in use (access tokens', and ID tokens' when they differ); answers the access-token key's kid. */
  async rotate(actor: string): Promise<string> {
    const [accessKey, ...others] = await Promise.all(this.algorithms().map((alg) => this.generate(alg)));
    for (const key of [accessKey!, ...others]) {
      await handleCommand(this.deps, keyRingDecider, SIGNING_KEYS_STREAM, { type: 'RotateSigningKey', key }, { ...systemContext(this.platformTenant), actor });
    }
    await this.reload();
    return accessKey!.kid;
  }

  async reload(): Promise<void> {
    const events = await this.deps.store.readStream(SIGNING_KEYS_STREAM);
    this.state = fold(keyRingDecider, events as unknown as SigningKeyEvent[]);
    this.loadedAt = Date.now();
  }

  /** The key new tokens of `alg` (by default the access tokens' algorithm) are signed with. */
  async signingKey(alg: SigningAlgorithm = this.alg): Promise<SigningKeyPair> {
    await this.reloadIfOlderThan(RELOAD_INTERVAL_MS);
    const current = this.state.keys.filter((k) => k.alg === alg).at(-1);
    if (!current) throw new Error(`No ${alg} signing key: KeyRing.start() was not called`);
    return { kid: current.kid, alg, key: this.importKey(current).sign };
  }

  /**
   * The verification key of `alg` (by default the access tokens') for a kid, if it is still
   * published (reloading once for an unknown kid): a node:crypto key object, made once per kid.
   */
  async verificationKey(kid: string, alg: SigningAlgorithm = this.alg): Promise<KeyObject | null> {
    let key = this.published(alg).find((k) => k.kid === kid);
    if (!key) {
      await this.reloadIfOlderThan(KEY_RECHECK_MS);
      key = this.published(alg).find((k) => k.kid === kid);
    }
    return key ? this.importKey(key).verify : null;
  }

  /**
   * Reloads the ring when it was loaded more than `maxAgeMs` ago: another instance's rotation signs
   * with the new key at once, so the JWKS this instance publishes must hold it as soon as a relying
   * party, seeing the new kid, asks again (OIDC Core 10.1.1). At most one stream read per `maxAgeMs`.
   */
  async reloadIfOlderThan(maxAgeMs: number): Promise<void> {
    if (Date.now() - this.loadedAt > maxAgeMs) await this.reload();
  }

  /**
   * The public JWKS: the public keys of every algorithm in use (access tokens' when RS256 or ES256,
   * ID tokens' RS256), access tokens' first; an HS256 secret is never published.
   */
  jwks(): { keys: JWK[] } {
    const published = this.algorithms().flatMap((alg) => (alg === 'HS256' ? [] : this.published(alg)));
    return { keys: published.map((k) => ({ ...(k.publicJwk as JWK), kid: k.kid, alg: k.alg, use: 'sig' })) };
  }

  private algorithms(): SigningAlgorithm[] {
    return this.alg === ID_TOKEN_ALG ? [this.alg] : [this.alg, ID_TOKEN_ALG];
  }

  private published(alg: SigningAlgorithm): SigningKey[] {
    return publishedKeys(this.state, alg, this.deps.clock.now(), MAX_ACCESS_TOKEN_SECONDS);
  }

  private importKey(key: SigningKey): { verify: KeyObject; sign: KeyObject } {
    const cached = this.imported.get(key.kid);
    if (cached) return cached;
    const secret = this.deps.secretBox.open(key.sealedPrivateKey);
    let imported: { verify: KeyObject; sign: KeyObject };
    if (key.alg === 'HS256') {
      const secretKey = createSecretKey(Buffer.from(secret, 'base64url'));
      imported = { verify: secretKey, sign: secretKey };
    } else {
      imported = { verify: createPublicKey({ key: key.publicJwk as JsonWebKey, format: 'jwk' }), sign: createPrivateKey({ key: JSON.parse(secret) as JsonWebKey, format: 'jwk' }) };
    }
    this.imported.set(key.kid, imported);
    return imported;
  }

  private async generate(alg: SigningAlgorithm): Promise<SigningKey> {
    const kid = newId();
    const createdAt = this.deps.clock.now().toISOString();
    if (alg === 'HS256') {
      return { kid, alg: 'HS256', publicJwk: null, sealedPrivateKey: this.deps.secretBox.seal(randomBytes(32).toString('base64url')), createdAt };
    }
    // RS256: 2048-bit RSA; ES256: the P-256 curve (RFC 7518 section 3.4).
    const { publicKey, privateKey } = await generateKeyPair(alg, { modulusLength: 2048, extractable: true });
    const { kty, n, e, crv, x, y } = await exportJWK(publicKey);
    return {
      kid,
      alg,
      publicJwk: alg === 'ES256' ? { kty, crv, x, y } : { kty, n, e },
      sealedPrivateKey: this.deps.secretBox.seal(JSON.stringify(await exportJWK(privateKey))),
      createdAt,
    };
  }
}
