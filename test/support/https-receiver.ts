import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { generate } from 'selfsigned';

export interface ReceivedRequest {
  /** Path and query, e.g. /hook?for=crm. */
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** The status the receiver answered with. */
  answered: number;
}

/** How the receiver answers the next request: a status and body, or a misbehaviour. */
export type Answer = { status: number; body?: string; headers?: Record<string, string> } | 'hang' | 'endless';

export interface HttpsReceiver {
  /** https://localhost:<port>/hook */
  url: string;
  port: number;
  /** The self-signed certificate, as a file for IAM_OUTBOUND_CA_FILE. */
  caFile: string;
  requests: ReceivedRequest[];
  /** TLS connections accepted, and how many of them resumed an earlier session. */
  connections: { accepted: number; resumed: number };
  answer(with_: Answer | ((request: ReceivedRequest) => Answer)): void;
  /** Stops listening (the port then refuses connections) and starts again on the same port. */
  goDown(): Promise<void>;
  comeUp(): Promise<void>;
  close(): Promise<void>;
}

export const RESOLVED_BY_TEST_ONLY = 'webhooks.test';

/**
 * One self-signed certificate per test file for localhost, 127.0.0.1 and `webhooks.test`, a name no
 * DNS knows (tests resolve it themselves).
 */
const certificate = generate([{ name: 'commonName', value: 'localhost' }], {
  keySize: 2048,
  algorithm: 'sha256',
  extensions: [{ name: 'subjectAltName', altNames: [{ type: 2, value: 'localhost' }, { type: 2, value: RESOLVED_BY_TEST_ONLY }, { type: 7, ip: '127.0.0.1' }] }],
});

/** The certificate and its key, and the certificate as a file for IAM_OUTBOUND_CA_FILE. */
export async function receiverCertificate(): Promise<{ cert: string; key: string; caFile: string }> {
  const { cert, private: key } = await certificate;
  const caFile = path.join(mkdtempSync(path.join(tmpdir(), 'receiver-')), 'ca.pem');
  writeFileSync(caFile, cert);
  return { cert, key, caFile };
}

/** A real HTTPS server on localhost that records what it receives and answers as told. */
export async function startHttpsReceiver(): Promise<HttpsReceiver> {
  const { cert, key, caFile } = await receiverCertificate();
  const requests: ReceivedRequest[] = [];
  const connections = { accepted: 0, resumed: 0 };
  let answerFor: (request: ReceivedRequest) => Answer = () => ({ status: 200, body: 'ok' });
  let server: Server | null = null;
  let port = 0;

  async function listen(): Promise<void> {
    server = createServer({ cert, key }, (incoming, response) => {
      const chunks: Buffer[] = [];
      incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
      incoming.on('end', () => {
        const received: ReceivedRequest = { url: incoming.url ?? '', headers: incoming.headers, body: Buffer.concat(chunks).toString('utf8'), answered: 0 };
        const answer = answerFor(received);
        requests.push(received);
        if (answer === 'hang') return;
        if (answer === 'endless') {
          received.answered = 200;
          response.writeHead(200, { 'content-type': 'application/octet-stream' });
          const block = Buffer.alloc(64 * 1024, 'x');
          const pump = () => {
            while (!response.destroyed && response.write(block));
            if (!response.destroyed) response.once('drain', pump);
          };
          pump();
          return;
        }
        received.answered = answer.status;
        response.writeHead(answer.status, answer.headers ?? {}).end(answer.body ?? '');
      });
    });
    server.on('secureConnection', (socket) => {
      connections.accepted += 1;
      if (socket.isSessionReused()) connections.resumed += 1;
    });
    await new Promise<void>((resolve) => server!.listen(port, '127.0.0.1', resolve));
    port = (server!.address() as AddressInfo).port;
  }

  async function goDown(): Promise<void> {
    const current = server;
    server = null;
    if (!current) return;
    current.closeAllConnections();
    await new Promise((resolve) => current.close(resolve));
  }

  await listen();
  return {
    get url() {
      return `https://localhost:${port}/hook`;
    },
    get port() {
      return port;
    },
    caFile,
    requests,
    connections,
    answer(with_) {
      answerFor = typeof with_ === 'function' ? with_ : () => with_;
    },
    goDown,
    comeUp: listen,
    close: goDown,
  };
}
