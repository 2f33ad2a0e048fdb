/**
 * RS256 signing strategies side by side, for the OAuth benchmark's "where the time goes": jose
 * (WebCrypto), node:crypto synchronously on the event loop, node:crypto on libuv's thread pool
 * (signCompactJws, what the service uses), and a pool of worker threads. Each signs the same JWS.
 */
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import { importJWK, SignJWT } from 'jose';
import { signCompactJws } from '../../src/platform/crypto/jws-signing.ts';
import { timed } from './service.ts';
import { eventLoopCpu, fmt } from './support.ts';

const HEADER = { alg: 'RS256' as const, kid: 'bench', typ: 'at+jwt' };
const CLAIMS = { iss: 'http://iam.test', sub: 'platform.client', aud: 'platform', tid: 'platform', roles: [], acr: '0', amr: [], scope: 'manage:users', iat: 0, exp: 900, jti: 'x' };
const signingInput = () => `${Buffer.from(JSON.stringify(HEADER)).toString('base64url')}.${Buffer.from(JSON.stringify(CLAIMS)).toString('base64url')}`;

/** Worker threads each holding the key; requests go round-robin, one message each way per signature. */
class WorkerSigningPool {
  private readonly workers: Worker[];
  private readonly pending = new Map<number, (signature: Buffer) => void>();
  private next = 0;

  constructor(privateKey: KeyObject, size: number) {
    const source = `const { parentPort, workerData } = require('node:worker_threads');
      const { sign, createPrivateKey } = require('node:crypto');
      const key = createPrivateKey(workerData);
      parentPort.on('message', ({ id, input }) => parentPort.postMessage({ id, signature: sign('sha256', Buffer.from(input), key) }));`;
    const pem = privateKey.export({ format: 'pem', type: 'pkcs8' });
    this.workers = Array.from({ length: size }, () => {
      const worker = new Worker(source, { eval: true, workerData: pem });
      worker.on('message', ({ id, signature }: { id: number; signature: Uint8Array }) => {
        this.pending.get(id)!(Buffer.from(signature));
        this.pending.delete(id);
      });
      return worker;
    });
  }

  async signJws(): Promise<string> {
    const input = signingInput();
    const id = this.next++;
    const signature = await new Promise<Buffer>((resolve) => {
      this.pending.set(id, resolve);
      this.workers[id % this.workers.length]!.postMessage({ id, input });
    });
    return `${input}.${signature.toString('base64url')}`;
  }

  close = () => Promise.all(this.workers.map((worker) => worker.terminate()));
}

export async function compareSigners(count: number): Promise<void> {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const joseKey = await importJWK(privateKey.export({ format: 'jwk' }), 'RS256');
  const pool = new WorkerSigningPool(privateKey, 2);
  const signers: Record<string, () => Promise<string>> = {
    'jose SignJWT (WebCrypto key)': () => new SignJWT(CLAIMS).setProtectedHeader(HEADER).sign(joseKey),
    'node:crypto, KeyObject made once, on the event loop': async () => {
      const input = signingInput();
      return `${input}.${sign('sha256', Buffer.from(input), privateKey).toString('base64url')}`;
    },
    'node:crypto, KeyObject made once, libuv thread pool (in use)': () => signCompactJws(HEADER, CLAIMS, privateKey),
    'worker_threads pool (2), a message each way per signature': () => pool.signJws(),
  };
  console.log('RS256 signing alone (2048-bit key):');
  try {
    for (const [name, signer] of Object.entries(signers)) {
      await timed(50, 4, signer); // warm-up
      const alone = await timed(Math.ceil(count / 4), 1, signer);
      const figures = [];
      for (const concurrency of [8, 32]) {
        const loopBefore = eventLoopCpu() ?? 0;
        const { perSecond } = await timed(count, concurrency, signer);
        figures.push(`${fmt(perSecond)}/s at ${concurrency} (event loop ${fmt((((eventLoopCpu() ?? 0) - loopBefore) * 1e6) / count)} µs each)`);
      }
      console.log(`  ${name.padEnd(62)} ${fmt(1000 / alone.perSecond, 3)} ms each alone; ${figures.join(', ')}`);
    }
  } finally {
    await pool.close();
  }
}
