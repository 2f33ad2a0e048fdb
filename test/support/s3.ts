import { existsSync, readFileSync } from 'node:fs';
import { request } from 'node:https';
import path from 'node:path';
import { describe, it } from 'vitest';

// A real S3-compatible server: scripts/s3/start.sh starts moto's over HTTPS on 127.0.0.1:9444.
export const s3Endpoint = process.env.S3_ENDPOINT ?? `https://localhost:${process.env.S3_PORT ?? '9444'}`;
/** The server's self-signed certificate, which the service under test must trust. */
export const s3CaFile = process.env.S3_CA_FILE ?? path.resolve('.data/s3/s3-cert.pem');

async function unreachableReason(): Promise<string | undefined> {
  const hint = 'run scripts/s3/start.sh or set S3_ENDPOINT and S3_CA_FILE';
  if (!existsSync(s3CaFile)) return `no certificate at ${s3CaFile}; ${hint}`;
  return new Promise((resolve) => {
    const probe = request(s3Endpoint, { ca: readFileSync(s3CaFile, 'utf8'), timeout: 3000 }, (response) => {
      response.resume();
      resolve(undefined);
    });
    const fail = (why: string) => resolve(`no S3-compatible server at ${s3Endpoint} (${why}); ${hint}`);
    probe.on('timeout', () => probe.destroy(new Error('timeout')));
    probe.on('error', (error) => fail(error.message));
    probe.end();
  });
}

const s3Unavailable = await unreachableReason();

/** Like whenKafkaReachable: registered when the server answers; fails under CI=true, else listed as skipped. */
export function whenS3Reachable(register: () => void): void {
  if (!s3Unavailable) register();
  else if (process.env.CI === 'true') {
    it('reaches the S3-compatible server (CI=true)', () => {
      throw new Error(s3Unavailable);
    });
  } else describe.skip(`skipped: ${s3Unavailable}`, register);
}
