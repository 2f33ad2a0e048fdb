import { lookup } from 'node:dns/promises';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { createSecureContext, rootCertificates } from 'node:tls';
import { refusalReason } from './address-policy.ts';
import type { Http1Response } from './http1-responses.ts';
import { ReceiverConnections, type Exchange } from './receiver-connections.ts';

/** What one outbound request came to. `error` is set when it failed before a usable answer. */
export interface AttemptResult {
  ok: boolean;
  status: number | null;
  /** At most the first RESPONSE_BODY_LIMIT bytes of the answer, as text. */
  body: string | null;
  durationMs: number;
  error: string | null;
}

export interface OutboundRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** An attempt made by a protocol client of its own (an S3 upload) through `HttpsClient.guardedAgent`. */
export interface OutboundSend {
  send(signal: AbortSignal): Promise<AttemptResult>;
}

/** A URL whose host's addresses passed the policy, and the address its connections go to. */
export interface CheckedTarget {
  url: URL;
  address: string;
  family: number;
}

export type Resolver = (hostname: string) => Promise<{ address: string; family: number }[]>;

export interface HttpsClientOptions {
  /** IAM_ALLOW_PRIVATE_NETWORK_TARGETS: loopback and private ranges become reachable (never metadata). */
  allowPrivateNetworks: boolean;
  timeoutMs: number;
  /** PEM certificates trusted beside the public roots (IAM_OUTBOUND_CA_FILE). */
  extraCaPem?: string | undefined;
  /** DNS, replaceable so a test can make a name resolve to a chosen address. */
  resolve?: Resolver;
  /** Connections kept to one receiver (origin and address). */
  maxSockets?: number;
  /** Requests written ahead on one keep-alive connection (HTTP/1.1 pipelining), 1 for none (receiver-connections.ts). */
  maxPipelined?: number;
}

export const RESPONSE_BODY_LIMIT = 1024;
/**
 * How long a host's addresses are reused: a receiver taking thousands of deliveries a second is not
 * resolved for each one. Every attempt still checks the addresses and connects to the one checked.
 */
const RESOLUTION_TTL_MS = 5_000;
const MAX_RESOLUTIONS_KEPT = 1_000;
/** Connection pools kept (one per origin and checked address); beyond it the oldest is closed. */
const MAX_POOLS_KEPT = 1_000;
/**
 * Requests pipelined on one connection by default: a connection's requests then go in one write and
 * one TLS record, and its answers come back in one read. A request that hangs holds those behind it
 * until its timeout closes the connection (they fail and are retried).
 */
const DEFAULT_PIPELINED = 8;
/** An idle keep-alive connection is closed after this (receivers usually close theirs sooner). */
const KEEP_ALIVE_MS = 30_000;
/** Response headers larger than this fail the attempt (a receiver cannot make us buffer more). */
const MAX_RESPONSE_HEADER_BYTES = 16 * 1024;

export class OutboundRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OutboundRefusedError';
  }
}

const systemResolver: Resolver = (hostname) => lookup(hostname, { all: true, verbatim: true });

/**
 * POSTs to receivers outside the service (webhooks, log streams) without becoming a way into the
 * service's own network: https only; the host is resolved here and every address checked
 * (address-policy.ts), then the connection goes to the address that was checked, so a second DNS
 * answer (rebinding) cannot swap it; redirects are not followed (a 3xx is a failure); the answer
 * is read up to 1 KB and its headers up to 16 KB; the whole request is bounded by `timeoutMs`.
 */
export class HttpsClient {
  /**
   * The keep-alive connections of each receiver (origin and the address checked for it): TLS
   * handshakes only when a connection opens, resumed sessions after the first, at most `maxSockets`
   * connections to one receiver.
   */
  private readonly pools = new Map<string, ReceiverConnections>();
  private readonly resolve: Resolver;
  private guarded: https.Agent | null = null;
  private readonly resolutions = new Map<string, { addresses: ReturnType<Resolver>; expiresAt: number }>();
  /** URLs checked within RESOLUTION_TTL_MS, with the address checked: a receiver's URL is not parsed and checked for each delivery. */
  private readonly checkedUrls = new Map<string, { target: CheckedTarget; expiresAt: number }>();
  /**
   * The cuts of the requests in flight, per interrupting signal: one listener per signal rather than
   * one per request, as each addEventListener walks the signal's listeners (thousands in flight).
   */
  private readonly cutsBySignal = new WeakMap<AbortSignal, Set<PendingPost>>();
  /** Each checked target's pool key (origin and address): `URL.origin` is recomputed at every read. */
  private readonly poolKeys = new WeakMap<CheckedTarget, string>();

  constructor(private readonly options: HttpsClientOptions) {
    this.resolve = options.resolve ?? systemResolver;
  }

  private agentOptions(): https.AgentOptions {
    return {
      keepAlive: true,
      maxSockets: this.options.maxSockets ?? 64,
      // One context for every connection: given as `ca`, the certificates would be parsed again for
      // each connection and serialised into the agent's pool key for each request.
      ...(this.options.extraCaPem ? { secureContext: this.secureContext() } : {}),
    };
  }

  private context: ReturnType<typeof createSecureContext> | null = null;
  private secureContext() {
    this.context ??= createSecureContext({ ca: [...rootCertificates, this.options.extraCaPem!] });
    return this.context;
  }

  /**
   * The address a request to `url` would connect to; throws OutboundRefusedError when the URL is
   * not https or any of the host's addresses is refused (one bad answer is enough: DNS may rotate).
   */
  async checkedAddress(url: string): Promise<CheckedTarget> {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new OutboundRefusedError('not a valid URL');
    }
    if (parsed.protocol !== 'https:') throw new OutboundRefusedError('only https URLs are allowed');
    const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
    const addresses = isIP(host) ? [{ address: host, family: isIP(host) }] : await this.resolveRecently(host).catch(() => []);
    if (addresses.length === 0) throw new OutboundRefusedError(`${host} does not resolve`);
    for (const { address } of addresses) {
      const reason = refusalReason(address, this.options.allowPrivateNetworks);
      if (reason) throw new OutboundRefusedError(`${host} resolves to a ${reason} address (${address}), which is not allowed`);
    }
    const { address, family } = addresses[0]!;
    return { url: parsed, address, family };
  }

  /** checkedAddress, from a check at most RESOLUTION_TTL_MS old (refusals are not kept). */
  private async checkedRecently(url: string): Promise<CheckedTarget> {
    const now = performance.now();
    const recent = this.recentCheck(url);
    if (recent) return recent;
    const target = await this.checkedAddress(url);
    if (this.checkedUrls.size >= MAX_RESOLUTIONS_KEPT) this.checkedUrls.clear();
    this.checkedUrls.set(url, { target, expiresAt: now + RESOLUTION_TTL_MS });
    return target;
  }

  private recentCheck(url: string): CheckedTarget | null {
    const recent = this.checkedUrls.get(url);
    return recent && recent.expiresAt > performance.now() ? recent.target : null;
  }

  /** The host's addresses, from a lookup at most RESOLUTION_TTL_MS old (a failed lookup is not kept). */
  private resolveRecently(host: string): ReturnType<Resolver> {
    const now = performance.now();
    const recent = this.resolutions.get(host);
    if (recent && recent.expiresAt > now) return recent.addresses;
    if (this.resolutions.size >= MAX_RESOLUTIONS_KEPT) this.forgetExpired(now);
    const addresses = this.resolve(host);
    this.resolutions.set(host, { addresses, expiresAt: now + RESOLUTION_TTL_MS });
    const forget = () => {
      if (this.resolutions.get(host)?.addresses === addresses) this.resolutions.delete(host);
    };
    addresses.then((found) => found.length === 0 && forget(), forget);
    return addresses;
  }

  private forgetExpired(now: number): void {
    for (const [host, { expiresAt }] of this.resolutions) if (expiresAt <= now) this.resolutions.delete(host);
    if (this.resolutions.size >= MAX_RESOLUTIONS_KEPT) this.resolutions.clear();
  }

  /** `signal` interrupts the attempt (shutdown); the timeout applies anyway. */
  async post(request: OutboundRequest, signal?: AbortSignal): Promise<AttemptResult> {
    const started = performance.now();
    let target: CheckedTarget;
    try {
      // Without an await when the check is recent (the usual case: one receiver, many deliveries).
      target = this.recentCheck(request.url) ?? (await this.checkedRecently(request.url));
    } catch (error) {
      return attemptResult(started, null, null, errorText(error));
    }
    try {
      const { status, body } = await this.send(target, request, signal);
      if (status >= 200 && status < 300) return attemptResult(started, status, body, null);
      const redirect = status >= 300 && status < 400;
      return attemptResult(started, status, body, redirect ? `redirect (${status}) not followed` : `receiver answered ${status}`);
    } catch (error) {
      return attemptResult(started, null, null, errorText(error));
    }
  }

  /**
   * For protocol clients that make their own requests (the S3 SDK): a keep-alive agent with the
   * same trust whose every connection resolves the host here and refuses it unless each address
   * passes the policy, so the address connected to is the one checked, redirects or not.
   */
  guardedAgent(): https.Agent {
    const lookup: LookupFunction = (hostname, options, callback) => {
      const host = hostname.replace(/^\[(.*)\]$/, '$1');
      const found = isIP(host) ? Promise.resolve([{ address: host, family: isIP(host) }]) : this.resolve(host);
      found.then(
        (addresses) => {
          const refused = addresses.map(({ address }) => refusalReason(address, this.options.allowPrivateNetworks)).find(Boolean);
          if (addresses.length === 0 || refused) {
            callback(new OutboundRefusedError(refused ? `${host} resolves to a ${refused} address, which is not allowed` : `${host} does not resolve`), '', 4);
          } else if (options.all) (callback as (e: null, a: { address: string; family: number }[]) => void)(null, addresses);
          else callback(null, addresses[0]!.address, addresses[0]!.family);
        },
        (error: Error) => callback(error as NodeJS.ErrnoException, '', 4),
      );
    };
    this.guarded ??= new https.Agent({ ...this.agentOptions(), lookup });
    return this.guarded;
  }

  close(): void {
    for (const connections of this.pools.values()) connections.close();
    this.pools.clear();
    this.guarded?.destroy();
  }

  /** The requests `signal` cuts: one listener per signal, a set of the requests in flight. */
  private cutsOf(signal: AbortSignal): Set<PendingPost> {
    let cuts = this.cutsBySignal.get(signal);
    if (!cuts) {
      const registered = new Set<PendingPost>();
      signal.addEventListener('abort', () => {
        for (const post of [...registered]) post.cut(signal.reason as Error);
      }, { once: true });
      this.cutsBySignal.set(signal, registered);
      cuts = registered;
    }
    return cuts;
  }

  /** The connections to the receiver at `url`'s origin, going only to the checked `address`. */
  private connectionsTo(target: CheckedTarget): ReceiverConnections {
    const { url, address } = target;
    let key = this.poolKeys.get(target);
    if (key === undefined) {
      key = `${url.origin} ${address}`;
      this.poolKeys.set(target, key);
    }
    let connections = this.pools.get(key);
    if (connections) return connections;
    if (this.pools.size >= MAX_POOLS_KEPT) {
      const [oldestKey, oldest] = this.pools.entries().next().value!;
      this.pools.delete(oldestKey);
      oldest.close();
    }
    const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
    connections = new ReceiverConnections(
      { hostname, host: url.host, port: Number(url.port || 443), address },
      {
        maxConnections: this.options.maxSockets ?? 64,
        maxPipelined: this.options.maxPipelined ?? DEFAULT_PIPELINED,
        secureContext: this.options.extraCaPem ? this.secureContext() : undefined,
        keepAliveMs: KEEP_ALIVE_MS,
        maxHeaderBytes: MAX_RESPONSE_HEADER_BYTES,
        bodyLimit: RESPONSE_BODY_LIMIT,
      },
    );
    this.pools.set(key, connections);
    return connections;
  }

  /**
   * One request on the receiver's connections: the answer's first RESPONSE_BODY_LIMIT bytes are
   * kept (a longer answer closes its connection); the timer and `signal` cut it, queued or sent.
   */
  private send(target: CheckedTarget, request: OutboundRequest, signal?: AbortSignal): Promise<{ status: number; body: string }> {
    const bytes = requestText(target.url, request);
    const connections = this.connectionsTo(target);
    return new Promise((resolve, reject) => {
      const post = new PendingPost(bytes, connections, { resolve, reject }, signal ? this.cutsOf(signal) : null, this.options.timeoutMs);
      if (signal?.aborted) return post.cut(signal.reason as Error);
      connections.send(post);
    });
  }
}

/**
 * A request in flight, as its connections see it (an Exchange): settled once, by its answer, an
 * error of its connection, its timer or a cut. A class rather than closures: several thousand are
 * made a second.
 */
class PendingPost implements Exchange {
  connection?: Exchange['connection'];
  private settled = false;
  private readonly timer: NodeJS.Timeout;

  constructor(
    public bytes: string,
    private readonly connections: ReceiverConnections,
    private readonly outcome: { resolve(answer: { status: number; body: string }): void; reject(error: Error): void },
    private readonly cuts: Set<PendingPost> | null,
    timeoutMs: number,
  ) {
    this.timer = setTimeout(timedOut, timeoutMs, this, timeoutMs);
    cuts?.add(this);
  }

  settle(error: Error | null, response?: Http1Response): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    this.cuts?.delete(this);
    if (error) this.outcome.reject(error);
    else this.outcome.resolve({ status: response!.status, body: response!.body });
  }

  /** Gives the request up: settled with `reason`, dropped from its connections (closing the one it was written on). */
  cut(reason: Error): void {
    if (this.settled) return;
    this.settle(reason);
    this.connections.cancel(this, new Error('the connection was closed: a request written before this one was given up'));
  }
}

function timedOut(post: PendingPost, timeoutMs: number): void {
  post.cut(new Error(`no answer within ${timeoutMs} ms`));
}

/** Header names a caller may not set: the client frames the request and manages the connection. */
const FRAMING_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'te', 'trailer', 'expect']);
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const UNSAFE_VALUE = /[\r\n\0]/;
/**
 * Header names found sendable as given (a token, not framing, not host), checked once each rather
 * than at every request: a channel sends the same few names with every delivery. Bounded, as names
 * come from callers.
 */
const SENDABLE_NAMES = new Set<string>();
const SENDABLE_NAMES_KEPT = 1_000;

/** The whole HTTP/1.1 request as one string; throws on a header that could not be sent as given. */
function requestText(url: URL, { headers, body }: OutboundRequest): string {
  let head = `POST ${url.pathname}${url.search} HTTP/1.1\r\n`;
  let host = url.host;
  for (const name in headers) {
    const value = headers[name]!;
    if (UNSAFE_VALUE.test(value)) throw new Error(`header ${JSON.stringify(name)} cannot be sent`);
    if (!SENDABLE_NAMES.has(name)) {
      const lower = name.toLowerCase();
      if (!TOKEN.test(name)) throw new Error(`header ${JSON.stringify(name)} cannot be sent`);
      if (FRAMING_HEADERS.has(lower)) throw new Error(`header ${name} is set by the client`);
      if (lower === 'host') {
        host = value;
        continue;
      }
      if (SENDABLE_NAMES.size >= SENDABLE_NAMES_KEPT) SENDABLE_NAMES.clear();
      SENDABLE_NAMES.add(name);
    }
    head += `${name}: ${value}\r\n`;
  }
  return `${head}host: ${host}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

/** An attempt that started at `started` (performance.now()): ok unless `error` is set. */
function attemptResult(started: number, status: number | null, body: string | null, error: string | null): AttemptResult {
  return { ok: error === null, status, body, durationMs: Math.round(performance.now() - started), error };
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
