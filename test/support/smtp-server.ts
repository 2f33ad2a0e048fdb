import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { parseMail, type ParsedMail } from './mime.ts';

export interface ReceivedMail extends ParsedMail {
  /** Envelope sender and recipients (MAIL FROM, RCPT TO). */
  from: string;
  to: string[];
  /** The user the client authenticated as (null when it sent without AUTH). */
  authenticatedAs: string | null;
  raw: string;
}

export interface TestSmtpServer {
  /** smtp://user:password@127.0.0.1:<port>: what SMTP_URL is set to. */
  url: string;
  messages: ReceivedMail[];
  /** The first message, received already or later, that satisfies `predicate`. */
  waitForMessage(predicate?: (message: ReceivedMail) => boolean, timeoutMs?: number): Promise<ReceivedMail>;
  /** Client connections currently open. */
  openConnections(): number;
  close(): Promise<void>;
}

export const SMTP_USER = 'mailer';
export const SMTP_PASSWORD = 'p@ss:word/1';

/**
 * A real SMTP server on 127.0.0.1 and an ephemeral port that keeps what it receives. Plain SMTP
 * without STARTTLS (nodemailer would upgrade and refuse the self-signed certificate); AUTH PLAIN or
 * LOGIN with SMTP_USER / SMTP_PASSWORD, or no AUTH at all.
 */
export async function startSmtpServer(): Promise<TestSmtpServer> {
  const messages: ReceivedMail[] = [];
  const waiters = new Set<() => void>();
  let connections = 0;

  const server = new SMTPServer({
    secure: false,
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    authOptional: true,
    logger: false,
    closeTimeout: 1000, // close() waits this long for clients that still hold a connection
    onConnect(_session, callback) {
      connections += 1;
      callback();
    },
    onClose() {
      connections -= 1;
    },
    onAuth(auth, _session, callback) {
      if (auth.username === SMTP_USER && auth.password === SMTP_PASSWORD) callback(null, { user: auth.username });
      else callback(new Error('Invalid username or password'));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const envelope = session.envelope;
        messages.push({
          ...parseMail(raw),
          from: envelope.mailFrom ? envelope.mailFrom.address : '',
          to: envelope.rcptTo.map((recipient) => recipient.address),
          authenticatedAs: typeof session.user === 'string' ? session.user : null,
          raw,
        });
        for (const wake of waiters) wake();
        callback();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.server.address() as AddressInfo;

  return {
    url: `smtp://${encodeURIComponent(SMTP_USER)}:${encodeURIComponent(SMTP_PASSWORD)}@127.0.0.1:${port}`,
    messages,
    waitForMessage(predicate = () => true, timeoutMs = 5000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = messages.find(predicate);
          if (!found) return;
          done();
          resolve(found);
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`no matching e-mail within ${timeoutMs} ms; received: ${JSON.stringify(messages.map((m) => [m.to, m.subject]))}`));
        }, timeoutMs);
        const done = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    openConnections: () => connections,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
