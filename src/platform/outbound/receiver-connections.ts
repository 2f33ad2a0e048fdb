import { isIP } from 'node:net';
import { connect, type SecureContext, type TLSSocket } from 'node:tls';
import { Http1ProtocolError, Http1ResponseReader, type Http1Response } from './http1-responses.ts';

/** Where a receiver's connections go: the checked address, with the URL's host for TLS and the Host header. */
export interface ReceiverAddress {
  /** The URL's host name (SNI and certificate check) or IP address. */
  hostname: string;
  /** The Host header: host name and port as the URL has them. */
  host: string;
  port: number;
  /** The address that passed the policy: the only one connected to. */
  address: string;
}

export interface ReceiverConnectionsOptions {
  /** Connections kept to the receiver at most. */
  maxConnections: number;
  /**
   * Requests written ahead on one connection before its earlier ones are answered (HTTP/1.1
   * pipelining), 1 for none. Used only on a connection that already answered once without closing,
   * and dropped for the receiver for good once it closed a connection after an answer with
   * requests written behind it (a server that does not take pipelining).
   */
  maxPipelined: number;
  /** Trust beside (or instead of) the public roots; undefined for node's default. */
  secureContext: SecureContext | undefined;
  keepAliveMs: number;
  maxHeaderBytes: number;
  bodyLimit: number;
}

/** A request waiting for its answer: `settle` is called once, with the answer or the error that ended it. */
export interface Exchange {
  /**
   * The whole request, head and body, until it is written: the connection then drops it ('') so
   * that it is not kept while the answer is awaited (thousands in flight, each about as large as its body).
   */
  bytes: string;
  settle(error: Error | null, response?: Http1Response): void;
  /** Set once the request was written (an exchange still waiting in the queue is cancelled without a trace). */
  connection?: ReceiverConnection;
}

/** A long rest of an answer's body is read and discarded to keep the connection; past it, the connection closes. */
const DRAIN_LIMIT = 64 * 1024;

/**
 * One keep-alive TLS connection: requests are written in order (those given in the same turn of the
 * event loop in one write) and answered in order by its response reader.
 */
class ReceiverConnection {
  readonly socket: TLSSocket;
  /** Written and not yet answered, oldest first. */
  readonly waiting: Exchange[] = [];
  /** Answered at least once without closing: requests may be pipelined on it. */
  proven = false;
  closed = false;
  /** Requests given in this turn of the event loop, written together at its end. */
  private unwritten: string[] = [];
  private idleTimer: NodeJS.Timeout | null = null;
  private readonly reader: Http1ResponseReader;

  constructor(
    private readonly pool: ReceiverConnections,
    target: ReceiverAddress,
    options: ReceiverConnectionsOptions,
    session: Buffer | undefined,
  ) {
    this.reader = new Http1ResponseReader({ maxHeaderBytes: options.maxHeaderBytes, bodyLimit: options.bodyLimit, drainLimit: DRAIN_LIMIT }, (response) =>
      this.answered(response),
    );
    this.socket = connect({
      host: target.address,
      port: target.port,
      // The certificate is checked for the URL's host (the servername; an IP address has no SNI).
      ...(isIP(target.hostname) ? {} : { servername: target.hostname }),
      ...(options.secureContext ? { secureContext: options.secureContext } : {}),
      ...(session ? { session } : {}),
    });
    this.socket.setNoDelay(true);
    this.socket.on('session', (ticket: Buffer) => pool.rememberSession(ticket));
    this.socket.on('data', (chunk: Buffer) => {
      try {
        this.reader.feed(chunk);
      } catch (error) {
        this.close(error instanceof Http1ProtocolError ? error : new Error(String(error)));
      }
    });
    this.socket.on('end', () => {
      this.reader.end();
      this.close(new Error('the receiver closed the connection before answering'));
    });
    this.socket.on('error', (error) => this.close(error));
    this.socket.on('close', () => this.close(new Error('the connection closed before the answer')));
  }

  /**
   * Writes the request with the others given in this turn of the event loop: one string and one
   * socket write for them all (a write per request, even corked, cost the stream's bookkeeping per
   * request and a writev of many pieces).
   */
  write(exchange: Exchange): void {
    this.clearIdle();
    exchange.connection = this;
    this.waiting.push(exchange);
    const queued = this.unwritten.push(exchange.bytes);
    exchange.bytes = '';
    if (queued === 1) process.nextTick(flush, this);
  }

  /** Writes the requests given since the last flush (none if the connection closed meanwhile). */
  flush(): void {
    const bytes = this.unwritten.length === 1 ? this.unwritten[0]! : this.unwritten.join('');
    this.unwritten = [];
    if (!this.closed) this.socket.write(bytes);
  }

  /** Ends the connection; every request written on it and not answered fails with `error`. */
  close(error: Error): void {
    if (this.closed) return;
    this.closed = true;
    this.clearIdle();
    this.socket.destroy();
    const lost = this.waiting.splice(0);
    for (const exchange of lost) exchange.settle(error);
    this.pool.closed(this);
  }

  private answered(response: Http1Response): void {
    const exchange = this.waiting.shift();
    if (!exchange) return this.close(new Error('an answer to no request'));
    if (!response.closes) this.proven = true;
    exchange.settle(null, response);
    if (response.closes) {
      // Requests written behind an answer that closes: this receiver does not take pipelining.
      if (this.waiting.length > 0) this.pool.stopPipelining();
      return this.close(new Error('the receiver closed the connection before answering'));
    }
    if (this.waiting.length === 0) this.idleTimer = setTimeout(() => this.close(new Error('idle')), this.pool.keepAliveMs);
    this.pool.freed(this);
  }

  private clearIdle(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
  }
}

function flush(connection: ReceiverConnection): void {
  connection.flush();
}

/**
 * The connections to one receiver (origin and checked address), each a TLS socket of node:tls
 * speaking HTTP/1.1 itself: a request is one string written, an answer read by
 * Http1ResponseReader, with no per-request streams, parser objects or dispatch layers. A request
 * goes to an idle connection, else a new one (up to `maxConnections`), else, pipelined, to the
 * proven connection with the fewest waiting (up to `maxPipelined`), else it waits in a queue.
 */
export class ReceiverConnections {
  private readonly connections = new Set<ReceiverConnection>();
  private readonly queued: Exchange[] = [];
  private session: Buffer | undefined;
  private pipelining: boolean;

  constructor(
    private readonly target: ReceiverAddress,
    private readonly options: ReceiverConnectionsOptions,
  ) {
    this.pipelining = options.maxPipelined > 1;
  }

  get keepAliveMs(): number {
    return this.options.keepAliveMs;
  }

  /** Sends `exchange` as soon as a connection takes it. */
  send(exchange: Exchange): void {
    const connection = this.connectionFor();
    if (connection) connection.write(exchange);
    else this.queued.push(exchange);
  }

  /** The exchange is given up (timeout, shutdown): dropped if still queued; if written, its connection closes (HTTP/1.1 cannot cancel one request). */
  cancel(exchange: Exchange, error: Error): void {
    if (exchange.connection) return exchange.connection.close(error);
    const at = this.queued.indexOf(exchange);
    if (at >= 0) this.queued.splice(at, 1);
  }

  close(): void {
    for (const connection of [...this.connections]) connection.close(new Error('the client closed'));
    for (const exchange of this.queued.splice(0)) exchange.settle(new Error('the client closed'));
  }

  rememberSession(ticket: Buffer): void {
    this.session = ticket;
  }

  /** A connection has room again: queued requests go. */
  freed(connection: ReceiverConnection): void {
    while (this.queued.length > 0 && !connection.closed && connection.waiting.length < this.depthOf(connection)) connection.write(this.queued.shift()!);
  }

  stopPipelining(): void {
    this.pipelining = false;
  }

  closed(connection: ReceiverConnection): void {
    this.connections.delete(connection);
    // Queued requests take a new connection.
    while (this.queued.length > 0) {
      const next = this.connectionFor();
      if (!next) break;
      next.write(this.queued.shift()!);
    }
  }

  private depthOf(connection: ReceiverConnection): number {
    return this.pipelining && connection.proven ? this.options.maxPipelined : 1;
  }

  private connectionFor(): ReceiverConnection | null {
    let best: ReceiverConnection | null = null;
    for (const connection of this.connections) {
      if (connection.waiting.length === 0) return connection;
      if (connection.waiting.length < this.depthOf(connection) && (!best || connection.waiting.length < best.waiting.length)) best = connection;
    }
    if (this.connections.size < this.options.maxConnections) {
      const opened = new ReceiverConnection(this, this.target, this.options, this.session);
      this.connections.add(opened);
      return opened;
    }
    return best;
  }
}
