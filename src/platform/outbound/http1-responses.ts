/** One answer read off a connection: its status, the first `bodyLimit` bytes of its body, whether the connection ends with it. */
export interface Http1Response {
  status: number;
  body: string;
  /** The receiver closes the connection after this answer (or its body runs until the close). */
  closes: boolean;
}

export class Http1ProtocolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'Http1ProtocolError';
  }
}

const HEAD_END = Buffer.from('\r\n\r\n');
const LINE_END = Buffer.from('\r\n');
/** A chunk-size line or the trailers, at most this long. */
const MAX_CHUNK_LINE_BYTES = 1024;

/** The status of a status line `HTTP/1.x nnn[ reason]` (`head` up to `end`), or null when it is not one. */
function statusCode(head: string, end: number): number | null {
  if (!head.startsWith('HTTP/1.') || end < 12 || (head.charCodeAt(7) !== 0x30 && head.charCodeAt(7) !== 0x31) || head.charCodeAt(8) !== 0x20) return null;
  if (end > 12 && head.charCodeAt(12) !== 0x20) return null;
  let status = 0;
  for (let i = 9; i < 12; i++) {
    const digit = head.charCodeAt(i) - 0x30;
    if (digit < 0 || digit > 9) return null;
    status = status * 10 + digit;
  }
  return status;
}

type Framing = { kind: 'length'; left: number } | { kind: 'chunked'; left: number; state: 'size' | 'data' | 'data-end' | 'trailers' } | { kind: 'until-close' };

/**
 * Reads HTTP/1.1 answers, in order, off the bytes of one connection (answers to pipelined requests
 * follow each other): the status line, the headers (bounded by `maxHeaderBytes`, an error past
 * it), then the body framed by content-length, chunked transfer coding or the connection's close.
 * Only the first `bodyLimit` bytes of a body are kept; `answer` is called when a body ends, or as
 * soon as `bodyLimit` bytes are in when the rest is longer than `drainLimit` (the caller then closes
 * the connection: a receiver cannot make us read gigabytes). Interim (1xx) answers are skipped.
 */
export class Http1ResponseReader {
  private pending: Buffer = Buffer.alloc(0);
  private head: { status: number; closes: boolean } | null = null;
  private framing: Framing | null = null;
  private kept: Buffer[] = [];
  private keptBytes = 0;
  /** The answer in progress was handed over early (its body too long to read): what is left of it is ignored. */
  private handedOver = false;

  constructor(
    private readonly options: { maxHeaderBytes: number; bodyLimit: number; drainLimit: number },
    private readonly answer: (response: Http1Response) => void,
  ) {}

  /** Throws Http1ProtocolError on what is not a readable answer. */
  feed(chunk: Buffer): void {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    while (this.pending.length > 0 && !this.handedOver) {
      if (!this.head) {
        if (!this.readHead()) return;
        continue;
      }
      if (!this.readBody()) return;
    }
  }

  /** The connection ended: an answer whose body runs until the close is complete now. */
  end(): void {
    if (this.head && this.framing?.kind === 'until-close' && !this.handedOver) this.finish();
  }

  /** Whether an answer has started and not ended. */
  get midAnswer(): boolean {
    return this.head !== null;
  }

  private readHead(): boolean {
    const headEnd = this.pending.indexOf(HEAD_END);
    if (headEnd < 0) {
      if (this.pending.length > this.options.maxHeaderBytes) throw new Http1ProtocolError('response headers too large');
      return false;
    }
    if (headEnd > this.options.maxHeaderBytes) throw new Http1ProtocolError('response headers too large');
    const head = this.pending.toString('latin1', 0, headEnd);
    this.pending = this.pending.subarray(headEnd + HEAD_END.length);
    // Read with indexOf and char codes, not split and regular expressions: an answer per delivery.
    const statusEnd = head.indexOf('\r\n') < 0 ? head.length : head.indexOf('\r\n');
    const status = statusCode(head, statusEnd);
    if (status === null) throw new Http1ProtocolError('not an HTTP/1.1 answer');
    const http10 = head.charCodeAt(7) === 0x30;
    let length: number | null = null;
    let chunked = false;
    let connection = '';
    for (let start = statusEnd + 2; start < head.length; ) {
      let end = head.indexOf('\r\n', start);
      if (end < 0) end = head.length;
      const colon = head.indexOf(':', start);
      if (colon <= start || colon > end) throw new Http1ProtocolError('malformed response header');
      const name = head.slice(start, colon).trim().toLowerCase();
      if (name === 'content-length') {
        const value = head.slice(colon + 1, end).trim();
        if (!/^\d{1,15}$/.test(value) || (length !== null && length !== Number(value))) throw new Http1ProtocolError('invalid content-length header');
        length = Number(value);
      } else if (name === 'transfer-encoding') chunked = /(^|,)\s*chunked\s*$/i.test(head.slice(colon + 1, end));
      else if (name === 'connection') connection = head.slice(colon + 1, end).trim().toLowerCase();
      start = end + 2;
    }
    if (status < 200 && status !== 101) return true; // interim answer: the real one follows
    const options = connection === '' ? [] : connection.split(/\s*,\s*/);
    const closes = options.includes('close') || (http10 && !options.includes('keep-alive'));
    this.head = { status, closes };
    if (status === 204 || status === 304) this.framing = { kind: 'length', left: 0 };
    else if (chunked) this.framing = { kind: 'chunked', left: 0, state: 'size' };
    else if (length !== null) this.framing = { kind: 'length', left: length };
    else {
      this.framing = { kind: 'until-close' };
      this.head.closes = true;
    }
    if (this.framing.kind === 'length' && this.framing.left > this.options.bodyLimit + this.options.drainLimit) this.head.closes = true;
    if (this.framing.kind === 'length' && this.framing.left === 0) this.finish();
    return true;
  }

  /** Consumes what it can of the body; false when it needs more bytes. */
  private readBody(): boolean {
    const framing = this.framing!;
    if (framing.kind === 'until-close') {
      this.keep(this.pending);
      this.pending = Buffer.alloc(0);
      if (this.keptBytes >= this.options.bodyLimit) this.handOver();
      return false;
    }
    if (framing.kind === 'length') {
      const take = Math.min(framing.left, this.pending.length);
      this.keep(this.pending.subarray(0, take));
      this.pending = this.pending.subarray(take);
      framing.left -= take;
      if (framing.left === 0) this.finish();
      else if (this.head!.closes && this.keptBytes >= this.options.bodyLimit) this.handOver();
      return framing.left === 0;
    }
    return this.readChunked(framing);
  }

  private readChunked(framing: Extract<Framing, { kind: 'chunked' }>): boolean {
    switch (framing.state) {
      case 'size': {
        const lineEnd = this.lineEnd();
        if (lineEnd < 0) return false;
        const size = this.pending.toString('latin1', 0, lineEnd).split(';')[0]!.trim();
        if (!/^[0-9a-fA-F]{1,12}$/.test(size)) throw new Http1ProtocolError('invalid chunk size');
        this.pending = this.pending.subarray(lineEnd + LINE_END.length);
        framing.left = parseInt(size, 16);
        framing.state = framing.left === 0 ? 'trailers' : 'data';
        return true;
      }
      case 'data': {
        const take = Math.min(framing.left, this.pending.length);
        this.keep(this.pending.subarray(0, take));
        this.pending = this.pending.subarray(take);
        framing.left -= take;
        if (framing.left === 0) framing.state = 'data-end';
        // A chunked body's length is unknown: once the part kept is in, the rest is not read.
        if (this.keptBytes >= this.options.bodyLimit) {
          this.head!.closes = true;
          this.handOver();
          return false;
        }
        return framing.left === 0;
      }
      case 'data-end': {
        if (this.pending.length < LINE_END.length) return false;
        if (!this.pending.subarray(0, LINE_END.length).equals(LINE_END)) throw new Http1ProtocolError('malformed chunk');
        this.pending = this.pending.subarray(LINE_END.length);
        framing.state = 'size';
        return true;
      }
      case 'trailers': {
        const lineEnd = this.lineEnd();
        if (lineEnd < 0) return false;
        this.pending = this.pending.subarray(lineEnd + LINE_END.length);
        if (lineEnd === 0) this.finish();
        return true;
      }
    }
  }

  private lineEnd(): number {
    const at = this.pending.indexOf(LINE_END);
    if (at < 0 && this.pending.length > MAX_CHUNK_LINE_BYTES) throw new Http1ProtocolError('chunk line too long');
    return at;
  }

  private keep(bytes: Buffer): void {
    if (this.keptBytes >= this.options.bodyLimit || bytes.length === 0) return;
    const part = bytes.subarray(0, this.options.bodyLimit - this.keptBytes);
    this.kept.push(part);
    this.keptBytes += part.length;
  }

  /** The answer is handed over with the part of its body kept; the connection must close (the rest is not read). */
  private handOver(): void {
    this.handedOver = true;
    this.head!.closes = true;
    this.emit();
  }

  private finish(): void {
    this.emit();
    this.head = null;
    this.framing = null;
  }

  private emit(): void {
    const { status, closes } = this.head!;
    const body = this.kept.length === 0 ? '' : (this.kept.length === 1 ? this.kept[0]! : Buffer.concat(this.kept)).toString('utf8');
    this.kept = [];
    this.keptBytes = 0;
    this.answer({ status, body, closes });
  }
}
