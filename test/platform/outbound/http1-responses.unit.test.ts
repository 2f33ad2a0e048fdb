import { describe, expect, it } from 'vitest';
import { Http1ResponseReader, type Http1Response } from '../../../src/platform/outbound/http1-responses.ts';

const reader = (limits: Partial<{ maxHeaderBytes: number; bodyLimit: number; drainLimit: number }> = {}) => {
  const answers: Http1Response[] = [];
  const read = new Http1ResponseReader({ maxHeaderBytes: 1024, bodyLimit: 16, drainLimit: 64, ...limits }, (answer) => answers.push(answer));
  return { answers, read, feed: (text: string) => read.feed(Buffer.from(text, 'latin1')) };
};

describe('HTTP/1.1 answers read off a connection', () => {
  it('reads pipelined answers in order, whole or split at any byte', () => {
    const bytes = 'HTTP/1.1 204 No Content\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhelloHTTP/1.1 500 Oops\r\nContent-Length: 3\r\nconnection: close\r\n\r\nbad';
    const whole = reader();
    whole.feed(bytes);
    const split = reader();
    for (const byte of bytes) split.feed(byte);
    for (const { answers } of [whole, split]) {
      expect(answers).toEqual([
        { status: 204, body: '', closes: false },
        { status: 200, body: 'hello', closes: false },
        { status: 500, body: 'bad', closes: true },
      ]);
    }
  });

  it('reads chunked bodies (extensions and trailers too) and skips interim answers', () => {
    const { answers, feed } = reader();
    feed('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n2\r\nde\r\n0\r\nx-trailer: 1\r\n\r\n');
    feed('HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n');
    expect(answers).toEqual([
      { status: 200, body: 'abcde', closes: false },
      { status: 202, body: '', closes: false },
    ]);
  });

  it('keeps only the first bytes of a body: a short rest is read and the connection kept, a long or unbounded one is not read', () => {
    const kept = reader();
    kept.feed(`HTTP/1.1 200 OK\r\ncontent-length: 40\r\n\r\n${'a'.repeat(40)}HTTP/1.1 204 No Content\r\n\r\n`);
    expect(kept.answers).toEqual([
      { status: 200, body: 'a'.repeat(16), closes: false },
      { status: 204, body: '', closes: false },
    ]);
    const long = reader();
    long.feed(`HTTP/1.1 200 OK\r\ncontent-length: 1000000\r\n\r\n${'b'.repeat(20)}`);
    expect(long.answers).toEqual([{ status: 200, body: 'b'.repeat(16), closes: true }]);
    const endless = reader();
    endless.feed(`HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n100\r\n${'c'.repeat(20)}`);
    expect(endless.answers).toEqual([{ status: 200, body: 'c'.repeat(16), closes: true }]);
  });

  it('takes a body without length as running until the close, and HTTP/1.0 as closing', () => {
    const untilClose = reader();
    untilClose.feed('HTTP/1.1 200 OK\r\n\r\nall of it');
    expect(untilClose.answers).toEqual([]);
    untilClose.read.end();
    expect(untilClose.answers).toEqual([{ status: 200, body: 'all of it', closes: true }]);
    const old = reader();
    old.feed('HTTP/1.0 200 OK\r\ncontent-length: 2\r\n\r\nok');
    expect(old.answers).toEqual([{ status: 200, body: 'ok', closes: true }]);
  });

  it('refuses oversized headers, malformed heads and conflicting lengths', () => {
    expect(() => reader().feed(`HTTP/1.1 200 OK\r\nx-padding: ${'x'.repeat(2000)}`)).toThrow(/headers too large/);
    expect(() => reader().feed('SMTP ready\r\n\r\n')).toThrow(/not an HTTP\/1.1 answer/);
    expect(() => reader().feed('HTTP/1.1 200 OK\r\nno colon here\r\n\r\n')).toThrow(/malformed/);
    expect(() => reader().feed('HTTP/1.1 200 OK\r\ncontent-length: 2\r\ncontent-length: 3\r\n\r\n')).toThrow(/content-length/);
    expect(() => reader().feed('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n')).toThrow(/chunk size/);
  });
});
