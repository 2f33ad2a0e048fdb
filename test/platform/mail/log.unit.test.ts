import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { logMailer } from '../../../src/platform/mail/log.ts';
import { openMailer } from '../../../src/platform/mail/open.ts';

function capturingLogger(level: string) {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()));
      done();
    },
  });
  return { logger: pino({ level }, sink), lines };
}

const message = { to: 'ada@example.test', subject: 'Your sign-in link', text: 'https://iam.test/magic?token=secret' };

describe('log mailer', () => {
  it('logs recipient and subject at info, and the text only at debug', async () => {
    const info = capturingLogger('info');
    await logMailer(info.logger).send(message);
    expect(info.lines).toEqual([expect.objectContaining({ level: 30, to: message.to, subject: message.subject })]);
    expect(JSON.stringify(info.lines)).not.toContain('secret');

    const debug = capturingLogger('debug');
    await logMailer(debug.logger).send(message);
    expect(debug.lines[1]).toMatchObject({ level: 20, to: message.to, text: message.text });
  });

  it('is what openMailer gives without SMTP_URL, with a warning that nothing is sent', async () => {
    const { logger, lines } = capturingLogger('info');
    const mailer = openMailer({ from: 'IAM <no-reply@iam.test>' }, logger);
    await mailer.send(message);
    await mailer.close();
    expect(lines.map((line) => [line.level, line.component, line.to])).toEqual([
      [40, undefined, undefined],
      [30, 'mail', message.to],
    ]);
  });
});
