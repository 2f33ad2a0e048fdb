import { createHmac, timingSafeEqual } from 'node:crypto';
import { expect } from 'vitest';
import type { TestDatabase } from '../../support/database.ts';
import type { HttpsReceiver, ReceivedRequest } from '../../support/https-receiver.ts';
import { PLATFORM, startTestService, type TestService } from '../../support/service.ts';

export const ADMIN = { email: 'root@platform.test', password: 'Sup3rSecret!' };

export const WAIT = { timeout: 30_000, interval: 100 };

/** The service as webhooks tests run it: private targets allowed, the receiver's certificate trusted, short retries. */
export function startWebhookService(receiver: HttpsReceiver, options: { db?: TestDatabase; env?: Record<string, string> } = {}): Promise<TestService> {
  return startTestService({
    ...(options.db ? { db: options.db } : {}),
    env: {
      IAM_BOOTSTRAP_ADMIN_EMAIL: ADMIN.email,
      IAM_BOOTSTRAP_ADMIN_PASSWORD: ADMIN.password,
      IAM_ALLOW_PRIVATE_NETWORK_TARGETS: 'true',
      IAM_OUTBOUND_CA_FILE: receiver.caFile,
      IAM_WEBHOOK_RETRY_SCHEDULE: '2s,2s,2s,2s,2s',
      ...options.env,
    },
  });
}

export async function adminToken(t: TestService): Promise<string> {
  const login = await t.request({ method: 'POST', url: '/api/auth/login', tenant: PLATFORM, body: ADMIN });
  expect(login.status).toBe(200);
  return login.body.data.accessToken;
}

/** What a receiver does (spec, Webhook events): recompute the HMAC over `<timestamp>.<body>` with each secret. */
export function verifiesWith(secret: string, request: ReceivedRequest): boolean {
  const timestamp = String(request.headers['x-webhook-timestamp']);
  const expected = createHmac('sha256', secret).update(`${timestamp}.${request.body}`).digest();
  const offered = String(request.headers['x-webhook-signature']).split(',');
  const fresh = Math.abs(Date.now() / 1000 - Number(timestamp)) <= 300;
  return fresh && offered.some((hex) => hex.length === expected.length * 2 && timingSafeEqual(Buffer.from(hex, 'hex'), expected));
}
