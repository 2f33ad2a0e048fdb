import { setTimeout as sleep } from 'node:timers/promises';
import type { Answer, JsonClient } from './http.ts';

export const TENANT = 'acme';
export const PASSWORD = 'Soak-Passw0rd';

export type Operation = 'login' | 'refresh' | 'user.create' | 'user.update' | 'user.delete' | 'user.read' | 'fga.write' | 'fga.check';

/** Relative weights of the mix. */
const MIX: [Operation, number][] = [
  ['login', 5],
  ['refresh', 10],
  ['user.create', 10],
  ['user.update', 10],
  ['user.delete', 4],
  ['user.read', 15],
  ['fga.write', 16],
  ['fga.check', 30],
];
const UNAVAILABLE_PAUSE_MS = 250;
const MIX_TOTAL = MIX.reduce((sum, [, weight]) => sum + weight, 0);

export interface Sample {
  op: Operation;
  /** Start, in ms since the run began. */
  at: number;
  ms: number;
  status: number;
  failure?: string;
}

/** A write the service acknowledged (2xx), and what a read must show for it at the end. */
export interface AcknowledgedUser {
  id: string;
  email: string;
  /** The last acknowledged first name; null when a later update's outcome is unknown. */
  firstName: string | null;
  deleted: boolean;
  /** A delete whose outcome is unknown (no answer or 503): either state is right. */
  uncertain: boolean;
}

export interface Ledger {
  samples: Sample[];
  users: AcknowledgedUser[];
  /** Object ids of acknowledged tuples `document:<id>#viewer@user:<id>`, with their consistency tokens. */
  tuples: { objectId: string; subjectId: string; token: string }[];
  /** A read that contradicted an acknowledged write (wrong e-mail, check answering no). */
  contradictions: string[];
}

export const newLedger = (): Ledger => ({ samples: [], users: [], tuples: [], contradictions: [] });

const ok = (answer: Answer) => answer.status >= 200 && answer.status < 300;
/** No answer, or 503: the write may or may not have happened. */
const unknownOutcome = (answer: Answer) => answer.status === 0 || answer.status >= 500;

function pick(random: () => number): Operation {
  let roll = random() * MIX_TOTAL;
  for (const [op, weight] of MIX) {
    roll -= weight;
    if (roll < 0) return op;
  }
  return 'fga.check';
}

/**
 * One virtual client: signs in as its own admin account, then runs the mix until `until` (or
 * `maxRequests` of its own), pausing `pauseMs` between requests. Every request is a sample; every
 * acknowledged write goes to the ledger.
 */
export async function runWorker(options: {
  id: number;
  client: JsonClient;
  ledger: Ledger;
  startedAt: number;
  until: number;
  maxRequests: number;
  pauseMs: number;
}): Promise<void> {
  const { id, client, ledger, startedAt } = options;
  const email = `worker-${id}@soak.test`;
  let session: { access: string; refresh: string } | null = null;
  const mine: AcknowledgedUser[] = [];
  const tuples: Ledger['tuples'] = [];
  let serial = 0;
  let lastUnanswered = false;
  let seed = id * 7919 + 1;
  const random = () => ((seed = (seed * 48271) % 2147483647) / 2147483647);

  const timed = async (op: Operation, method: string, path: string, body?: unknown, token = session?.access): Promise<Answer> => {
    const t0 = performance.now();
    const answer = await client.send(method, path, body, { 'x-tenant': TENANT, ...(token ? { authorization: `Bearer ${token}` } : {}) });
    ledger.samples.push({ op, at: t0 - startedAt, ms: performance.now() - t0, status: answer.status, ...(answer.failure ? { failure: answer.failure } : {}) });
    lastUnanswered = unknownOutcome(answer);
    return answer;
  };
  const login = async () => {
    const answer = await timed('login', 'POST', '/api/auth/login', { email, password: PASSWORD }, undefined);
    if (answer.status === 200) session = { access: answer.body.data.accessToken, refresh: answer.body.data.refreshToken };
  };
  const any = <T>(items: T[]): T | undefined => items[Math.floor(random() * items.length)];
  const anyLive = () => any(mine.filter((u) => !u.deleted && !u.uncertain));

  const operations: Record<Operation, () => Promise<void>> = {
    login,
    async refresh() {
      const answer = await timed('refresh', 'POST', '/api/auth/token', { grant_type: 'refresh_token', refresh_token: session!.refresh });
      if (answer.status === 200) session = { access: answer.body.access_token, refresh: answer.body.refresh_token };
      // The token may have been spent by an exchange whose answer was lost: sign in again.
      else if (answer.status >= 400 && answer.status < 500) session = null;
    },
    async 'user.create'() {
      const user = { email: `u${id}-${serial++}@soak.test`, password: PASSWORD, firstName: 'first' };
      const answer = await timed('user.create', 'POST', '/api/users', user);
      if (answer.status === 201) mine.push({ id: answer.body.data.id, email: user.email, firstName: 'first', deleted: false, uncertain: false });
    },
    async 'user.update'() {
      const user = anyLive();
      if (!user) return;
      const firstName = `name-${serial++}`;
      const answer = await timed('user.update', 'PUT', `/api/users/${user.id}`, { firstName });
      if (ok(answer)) user.firstName = firstName;
      else if (unknownOutcome(answer)) user.firstName = null;
    },
    async 'user.delete'() {
      const user = anyLive();
      if (!user) return;
      const answer = await timed('user.delete', 'DELETE', `/api/users/${user.id}`);
      if (ok(answer)) user.deleted = true;
      else if (unknownOutcome(answer)) user.uncertain = true;
    },
    async 'user.read'() {
      const user = anyLive();
      if (!user) return;
      const answer = await timed('user.read', 'GET', `/api/users/${user.id}`);
      if (answer.status === 200 && answer.body.data.email !== user.email) ledger.contradictions.push(`user ${user.id} read back as ${answer.body.data.email}`);
      if (answer.status === 404) ledger.contradictions.push(`acknowledged user ${user.id} answered 404`);
    },
    async 'fga.write'() {
      const tuple = { objectType: 'document', objectId: `d${id}-${serial++}`, relation: 'viewer', subjectType: 'user', subjectId: `s${id}` };
      const answer = await timed('fga.write', 'POST', '/api/fga/tuples', tuple);
      if (answer.status === 201) tuples.push({ objectId: tuple.objectId, subjectId: tuple.subjectId, token: answer.body.data.consistencyToken });
    },
    async 'fga.check'() {
      const tuple = any(tuples);
      if (!tuple) return;
      const body = { objectType: 'document', objectId: tuple.objectId, relation: 'viewer', subjectType: 'user', subjectId: tuple.subjectId, consistencyToken: tuple.token };
      const answer = await timed('fga.check', 'POST', '/api/fga/check', body);
      if (answer.status === 200 && answer.body.data.allowed !== true) ledger.contradictions.push(`check of acknowledged tuple ${tuple.objectId} answered no`);
    },
  };

  for (let sent = 0; Date.now() < options.until && sent < options.maxRequests; sent += 1) {
    if (!session) await login();
    else await operations[pick(random)]();
    // A service that is down or not ready gets a breather, not a tight loop of retries.
    await sleep(lastUnanswered ? UNAVAILABLE_PAUSE_MS : options.pauseMs);
  }
  ledger.users.push(...mine);
  ledger.tuples.push(...tuples);
}

/** Reads every acknowledged write back; answers what is missing or wrong. */
export async function verifyLedger(client: JsonClient, ledger: Ledger, token: string): Promise<string[]> {
  const problems: string[] = [];
  const headers = { 'x-tenant': TENANT, authorization: `Bearer ${token}` };
  const checks = [
    ...ledger.users
      .filter((user) => !user.uncertain)
      .map((user) => async () => {
        const answer = await client.send('GET', `/api/users/${user.id}`, undefined, headers);
        if (user.deleted) {
          if (answer.status !== 404) problems.push(`deleted user ${user.id}: ${answer.status}`);
        } else if (answer.status !== 200) problems.push(`user ${user.id}: ${answer.status}`);
        else if (answer.body.data.email !== user.email || (user.firstName !== null && answer.body.data.firstName !== user.firstName)) {
          problems.push(`user ${user.id} reads ${answer.body.data.email}/${answer.body.data.firstName}, acknowledged ${user.email}/${user.firstName}`);
        }
      }),
    ...ledger.tuples.map((tuple) => async () => {
      const answer = await client.send('GET', `/api/fga/tuples?objectType=document&objectId=${tuple.objectId}`, undefined, headers);
      if (answer.status !== 200 || answer.body.data.pagination.total !== 1) problems.push(`tuple ${tuple.objectId}: ${answer.status} ${JSON.stringify(answer.body?.data?.pagination)}`);
    }),
  ];
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < checks.length) await checks[next++]!();
    }),
  );
  return problems;
}
