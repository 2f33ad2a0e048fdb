import http from 'node:http';

export interface Answer {
  /** The HTTP status, or 0 when no answer came (refused, reset, timed out). */
  status: number;
  body: any;
  /** The socket error's code when status is 0. */
  failure?: string;
}

/** A JSON client over loopback keep-alive connections that never throws: failures are answers too. */
export function jsonClient(baseUrl: string, options: { sockets: number; timeoutMs: number }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.sockets });
  return {
    send(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      return new Promise((resolve) => {
        const request = http.request(
          new URL(path, baseUrl),
          {
            method,
            agent,
            timeout: options.timeoutMs,
            headers: { ...headers, ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}) },
          },
          (response) => {
            const chunks: Buffer[] = [];
            response.on('data', (chunk: Buffer) => chunks.push(chunk));
            response.on('error', (error: NodeJS.ErrnoException) => resolve({ status: 0, body: null, failure: error.code ?? error.message }));
            response.on('end', () => {
              const text = Buffer.concat(chunks).toString();
              let parsed: unknown = text;
              try {
                parsed = text ? JSON.parse(text) : null;
              } catch {
                // not JSON: keep the text
              }
              resolve({ status: response.statusCode ?? 0, body: parsed });
            });
          },
        );
        request.on('timeout', () => request.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })));
        request.on('error', (error: NodeJS.ErrnoException) => resolve({ status: 0, body: null, failure: error.code ?? error.message }));
        request.end(payload);
      });
    },
    close(): void {
      agent.destroy();
    },
  };
}

export type JsonClient = ReturnType<typeof jsonClient>;
