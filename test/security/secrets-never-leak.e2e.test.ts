import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeliveredMessage, Subscription } from '../../src/platform/bus/port.ts';
import { base32Decode, timeStep, totpCode } from '../../src/modules/mfa/totp.ts';
import { createLogger } from '../../src/platform/logging.ts';
import { startHttpsReceiver, type HttpsReceiver } from '../support/https-receiver.ts';
import { kafkaBrokers, kafkaReachable } from '../support/kafka.ts';
import { PLATFORM, startTestService, type TestService } from '../support/service.ts';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.ts';

/** A value no code would produce by chance: any hit in storage or logs is a leak of that secret. */
const distinctive = (label: string) => `${label}-${randomBytes(9).toString('base64url')}-Zq9!`;
/** The part of an opaque token `<id>.<secret>` that proves possession (the id may be stored). */
const secretPart = (token: string) => token.slice(token.lastIndexOf('.') + 1);

/** The bus the flow's events go out on: the Kafka broker when one answers (as in CI), else the in-process log. */
const TOPIC = `leak-search-${randomBytes(4).toString('hex')}`;
const BUS: { name: string; env: Record<string, string>; topic: string } = kafkaReachable
  ? { name: 'Kafka', env: { KAFKA_BROKERS: kafkaBrokers.join(','), KAFKA_TOPIC: TOPIC, KAFKA_TOPIC_PARTITIONS: '1' }, topic: TOPIC }
  : { name: 'in-process', env: {}, topic: 'iam.events' };

/**
 * A full account flow with distinctive secret values, then a search of everything the service
 * keeps or sends on: its log (at trace level), every event in the store, every table of the
 * database (read models, inbox, outbound queue, checkpoints, the event table itself), every bus
 * message, every webhook body and every log-stream record sent (a delivered one is not kept in the
 * outbound queue). E-mail is
 * the one channel a link's token is meant to travel through, and a webhook request's headers the one
 * place a signature goes, so neither is searched.
 */
describe(`secrets never leak into logs, events, tables or the bus (${BUS.name})`, () => {
  let t: TestService;
  let smtp: TestSmtpServer;
  let receiver: HttpsReceiver;
  let subscription: Subscription;
  const logLines: string[] = [];
  const busMessages: DeliveredMessage[] = [];
  const secrets = new Map<string, string>();
  const remember = (label: string, value: string) => {
    secrets.set(label, value);
    return value;
  };

  const post = (url: string, body: unknown, token?: string) => t.request({ method: 'POST', url, tenant: PLATFORM, body, ...(token ? { token } : {}) });
  const mailedToken = async (url: string, email: string, subject: string) => {
    const before = smtp.messages.length;
    await post(url, { email });
    const mail = await smtp.waitForMessage((m) => smtp.messages.indexOf(m) >= before && m.subject === subject);
    return new URL(/https?:\/\/\S+/.exec(mail.text!)![0]).searchParams.get('token')!;
  };

  beforeAll(async () => {
    smtp = await startSmtpServer();
    const sink = new Writable({
      write(chunk, _encoding, done) {
        logLines.push(chunk.toString());
        done();
      },
    });
    receiver = await startHttpsReceiver();
    t = await startTestService({
      env: { SMTP_URL: smtp.url, IAM_ALLOW_PRIVATE_NETWORK_TARGETS: 'true', IAM_OUTBOUND_CA_FILE: receiver.caFile, ...BUS.env },
      logger: createLogger('trace', sink),
    });
    subscription = await t.service.bus.subscribe({
      groupId: 'leak-search',
      topic: BUS.topic,
      fromBeginning: true,
      handler: async (messages) => void busMessages.push(...messages),
    });
  });
  afterAll(async () => {
    await subscription?.close();
    await t?.close();
    await smtp?.close();
    await receiver?.close();
  });

  it('runs the flow, then finds none of its secrets anywhere', async () => {
    const admin = await t.token({ sub: 'admin', tenant: PLATFORM, roles: ['admin'] });
    // Log streams first, so the flow's audit entries stream too: a credential header and a collector token, both sealed.
    const streamBase = `https://localhost:${receiver.port}`;
    for (const stream of [
      { name: 'siem', type: 'WEBHOOK', config: { url: `${streamBase}/stream`, headers: { Authorization: `Bearer ${remember('log stream header', distinctive('Hdr'))}` } } },
      { name: 'hec', type: 'LOG_PLATFORM_B', config: { hecUrl: streamBase, hecToken: remember('log stream token', distinctive('Hec')) } },
    ]) {
      expect((await post('/api/log-streams', stream, admin)).status).toBe(201);
    }
    const email = 'leak@p.test';
    const created = await post('/api/users', { email, password: remember('initial password', distinctive('Pw1')) }, admin);
    expect(created.status).toBe(201);

    const login = await post('/api/auth/login', { email, password: secrets.get('initial password') });
    expect(login.status).toBe(200);
    remember('access token', login.body.data.accessToken);
    remember('refresh token', secretPart(login.body.data.refreshToken));
    const refreshed = await post('/api/auth/token', { grant_type: 'refresh_token', refresh_token: login.body.data.refreshToken });
    expect(refreshed.status).toBe(200);
    remember('rotated refresh token', secretPart(refreshed.body.refresh_token));

    const wrong = await post('/api/auth/login', { email, password: remember('mistyped password', distinctive('Wrong')) });
    expect(wrong.status).toBe(401);

    const changed = await post(
      '/api/auth/change-password',
      { currentPassword: secrets.get('initial password'), newPassword: remember('changed password', distinctive('Pw2')) },
      refreshed.body.access_token,
    );
    expect(changed.status).toBe(200);

    const reset = remember('reset link', await mailedToken('/api/auth/forgot-password', email, 'Reset your password'));
    expect((await post('/api/auth/reset-password', { token: reset, newPassword: remember('reset password', distinctive('Pw3')) })).status).toBe(200);
    secrets.set('reset link', secretPart(reset));

    const magic = await mailedToken('/api/auth/magic-link', email, 'Your sign-in link');
    const signedIn = await post('/api/auth/magic-link/verify', { token: magic });
    expect(signedIn.status).toBe(200);
    remember('magic link', secretPart(magic));

    // Two-factor: the TOTP secret, the recovery codes and a sign-in challenge.
    const own = signedIn.body.data.accessToken;
    const secret = remember('TOTP secret', (await post('/api/user/2fa/totp/setup', undefined, own)).body.data.secret);
    const enabled = await post('/api/user/2fa/totp/enable', { code: totpCode(base32Decode(secret), timeStep(new Date())) }, own);
    expect(enabled.status).toBe(200);
    const [recovery, unused] = enabled.body.data.recoveryCodes as [string, string];
    remember('recovery code', recovery);
    remember('unused recovery code', unused);
    const challenged = await post('/api/auth/login', { email, password: secrets.get('reset password') });
    remember('mfa token', secretPart(challenged.body.data.mfaToken));
    expect((await post('/api/auth/mfa/verify', { mfaToken: challenged.body.data.mfaToken, method: 'recovery_code', code: recovery })).status).toBe(200);

    const signup = await post('/api/auth/signup', { email: 'signup@p.test', password: remember('signup password', distinctive('Pw4')) });
    expect(signup.status).toBe(201);
    remember('signup refresh token', secretPart(signup.body.data.refreshToken));

    const hook = await post('/api/webhooks', { name: 'crm', url: receiver.url, events: ['user.created'] }, admin);
    expect(hook.status).toBe(201);
    remember('webhook secret', hook.body.data.signingSecret.replace(/^whsec_/, ''));
    const rotated = await post(`/api/webhooks/${hook.body.data.id}/rotate-secret`, undefined, admin);
    expect(rotated.status).toBe(200);
    remember('rotated webhook secret', rotated.body.data.signingSecret.replace(/^whsec_/, ''));
    // A delivery signed with both secrets, and a user.created event for the subscription.
    expect((await post(`/api/webhooks/${hook.body.data.id}/test`, undefined, admin)).status).toBe(200);
    expect((await post('/api/users', { email: 'hooked@p.test', password: remember('hooked password', distinctive('Pw5')) }, admin)).status).toBe(201);
    await expect.poll(() => receiver.requests.length, { timeout: 20_000 }).toBeGreaterThanOrEqual(2);

    const client = await post('/api/applications', { name: 'batch', type: 'm2m', scopes: ['manage:users'] }, admin);
    expect(client.status).toBe(201);
    remember('client secret', client.body.data.clientSecret);
    const rotatedClient = await post(`/api/applications/${client.body.data.id}/rotate-secret`, undefined, admin);
    expect(rotatedClient.status).toBe(200);
    const clientSecret = remember('rotated client secret', rotatedClient.body.data.clientSecret);
    const granted = await post('/api/auth/token', { grant_type: 'client_credentials', client_id: client.body.data.clientId, client_secret: clientSecret, scope: 'manage:users' });
    expect(granted.status, JSON.stringify(granted.body)).toBe(200);

    // The streams' records of the flow, up to its last audited step, have arrived.
    const streamed = () => receiver.requests.filter((request) => request.url !== '/hook');
    await expect.poll(() => streamed().filter((request) => request.body.includes('APPLICATION_SECRET_ROTATED')).length, { timeout: 20_000 }).toBeGreaterThanOrEqual(2);
    // Everything written so far has reached the bus.
    const head = await t.store.lastWrittenPosition();
    await expect.poll(() => busMessages.some((m) => BigInt(m.value.position) >= head), { timeout: 10_000 }).toBe(true);
    await t.service.background.drain();

    const places: Record<string, string> = {
      log: logLines.join(''),
      bus: JSON.stringify(busMessages),
      events: JSON.stringify(await allEvents(t), (_key, value) => (typeof value === 'bigint' ? String(value) : value)),
      'webhook bodies': receiver.requests.filter((request) => request.url === '/hook').map((request) => request.body).join('\n'),
      'log stream records': streamed().map((request) => request.body).join('\n'),
      ...(await everyTable(t)),
    };
    expect(logLines.filter((line) => line.includes('request completed')).length).toBeGreaterThan(8);
    expect(Object.keys(places)).toEqual(expect.arrayContaining(['table users', 'table sessions', 'table events', 'table outbound_deliveries', 'table outbound_bodies']));
    expect(places['webhook bodies']).toContain('hooked@p.test');
    expect(places['log stream records']).toContain('PASSWORD_RESET');

    const leaks = [...secrets].flatMap(([label, secret]) =>
      Object.entries(places).filter(([, text]) => text.includes(secret)).map(([place]) => `${label} in ${place}`),
    );
    expect(leaks).toEqual([]);
  });
});

async function allEvents(t: TestService) {
  const events = [];
  for (let after = 0n; ; ) {
    const batch = await t.store.readAll(after, 1000);
    if (batch.length === 0) return events;
    events.push(...batch);
    after = batch.at(-1)!.position;
  }
}

/** Every table of the service's schema (read models and all the rest) as text, one place per table. */
async function everyTable(t: TestService): Promise<Record<string, string>> {
  const { rows } = await t.db.pool.query<{ name: string }>(
    "select table_name as name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE'",
  );
  const dumps: Record<string, string> = {};
  for (const { name } of rows) {
    const dump = await t.db.pool.query<{ text: string | null }>(`select string_agg(t::text, E'\\n') as text from "${name}" t`);
    dumps[`table ${name}`] = dump.rows[0]?.text ?? '';
  }
  return dumps;
}
