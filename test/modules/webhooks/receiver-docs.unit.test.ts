import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { AUDIT_MAPPING } from '../../../src/modules/audit/event-mapping.ts';
import { WEBHOOK_EVENT_TYPES } from '../../../src/modules/audit/vocabulary.ts';
import { webhookBody } from '../../../src/modules/webhooks/channel.ts';
import { newSigningSecret, signatureHeaders, signingKey } from '../../../src/modules/webhooks/signing.ts';

const DOC = readFileSync(new URL('../../../docs/webhooks.md', import.meta.url), 'utf8');

/** The first fenced block of `language` after `heading` in docs/webhooks.md. */
function codeBlock(heading: string, language: string): string {
  const block = new RegExp('```' + language + '\\n([\\s\\S]*?)```').exec(DOC.slice(DOC.indexOf(heading)));
  if (!block) throw new Error(`no ${language} block after "${heading}" in docs/webhooks.md`);
  return block[1]!;
}

/** A delivery as the service signs it (signing.ts, what the webhook channel sends), to one or two secrets. */
function signed(secrets: string[], options: { at?: Date } = {}) {
  // Beyond ASCII, so the verifiers must hash the raw bytes as received.
  const body = webhookBody('0193aaaa-0000-7000-8000-000000000001', 'user.created', '2026-01-01T12:00:00.000Z', { id: 'u1', firstName: 'Zoë', lastName: '渡辺' });
  const headers = signatureHeaders(secrets.map(signingKey), options.at ?? new Date(), body);
  return { body, headers };
}

interface Case {
  secret: string;
  rawBody: Buffer;
  headers: Record<string, string>;
}
/** Each case's verdict. */
type Verifier = (cases: Case[]) => boolean[];

/**
 * The receiver examples of docs/webhooks.md, run as a reader would copy them: the Node.js function
 * imported from a module of its own, the Python one run by python3 (headers case-insensitive, as
 * Flask's), each against signatures made by the service's signer.
 */
describe('docs/webhooks.md: the signature verifiers verify what the service signs', () => {
  const verifiers: [string, Verifier][] = [];

  beforeAll(async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'webhook-verifiers-'));
    const nodeFile = path.join(dir, 'verify.mjs');
    writeFileSync(nodeFile, codeBlock('Node.js (express', 'js'));
    const { verify } = (await import(pathToFileURL(nodeFile).href)) as { verify: (secret: string, rawBody: Buffer, headers: Record<string, string>) => boolean };
    verifiers.push(['Node.js', (cases) => cases.map(({ secret, rawBody, headers }) => verify(secret, rawBody, headers))]);

    const pythonFile = path.join(dir, 'verify.py');
    writeFileSync(
      pythonFile,
      `${codeBlock('Python (', 'python')}
import base64, json, sys

class Headers(dict):
    def __getitem__(self, name):
        return next(value for key, value in self.items() if key.lower() == name.lower())

cases = json.load(sys.stdin)
print(json.dumps([verify(case["secret"], base64.b64decode(case["body"]), Headers(case["headers"])) for case in cases]))
`,
    );
    verifiers.push([
      'Python',
      (cases) => {
        const input = JSON.stringify(cases.map(({ secret, rawBody, headers }) => ({ secret, body: rawBody.toString('base64'), headers })));
        return JSON.parse(execFileSync('python3', [pythonFile], { input, encoding: 'utf8' })) as boolean[];
      },
    ]);
  });

  it('accept a fresh signature and, during a rotation, either secret; refuse another secret, a changed body and a stale timestamp', () => {
    const secret = newSigningSecret();
    const next = newSigningSecret();
    const fresh = signed([secret]);
    const rotating = signed([next, secret]);
    const stale = signed([secret], { at: new Date(Date.now() - 301_000) });
    expect(rotating.headers['x-webhook-signature']).toMatch(/^[0-9a-f]{64},[0-9a-f]{64}$/);
    const cases: Record<string, Case> = {
      fresh: { secret, rawBody: Buffer.from(fresh.body), headers: fresh.headers },
      'rotation, new secret': { secret: next, rawBody: Buffer.from(rotating.body), headers: rotating.headers },
      'rotation, previous secret': { secret, rawBody: Buffer.from(rotating.body), headers: rotating.headers },
      'another secret': { secret: newSigningSecret(), rawBody: Buffer.from(fresh.body), headers: fresh.headers },
      'changed body': { secret, rawBody: Buffer.from(fresh.body.replace('Zoë', 'Zoe')), headers: fresh.headers },
      'stale timestamp': { secret, rawBody: Buffer.from(stale.body), headers: stale.headers },
    };
    for (const [language, verify] of verifiers) {
      const verdicts = verify(Object.values(cases));
      const outcomes = Object.fromEntries(Object.keys(cases).map((name, i) => [name, verdicts[i]]));
      expect(outcomes, language).toEqual({
        fresh: true,
        'rotation, new secret': true,
        'rotation, previous secret': true,
        'another secret': false,
        'changed body': false,
        'stale timestamp': false,
      });
    }
  });
});

describe('docs/webhooks.md: the event types', () => {
  const emitted = new Set(Object.values(AUDIT_MAPPING).flatMap((rule) => ('webhook' in rule && rule.webhook ? [rule.webhook] : [])));
  /** A list item of the document, on one line. */
  const bullet = (start: string) => {
    const from = DOC.indexOf(`\n- ${start}`) + 1;
    const ends = ['\n- ', '\n\n'].map((end) => DOC.indexOf(end, from)).filter((at) => at > 0);
    return DOC.slice(from, Math.min(...ends)).replace(/\s+/g, ' ');
  };

  it('lists every type of the catalogue a subscription may name', () => {
    const events = bullet('`events`');
    expect(WEBHOOK_EVENT_TYPES.filter((type) => !events.includes(type))).toEqual([]);
  });

  it('names as "accepted but nothing sends them yet" exactly the catalogue types no event is delivered as', () => {
    const unsent = WEBHOOK_EVENT_TYPES.filter((type) => !emitted.has(type));
    // When a capability starts sending one of these, move it from this list (and from the docs' sentence) to the data bullet.
    const organizationTypes = WEBHOOK_EVENT_TYPES.filter((type) => type.startsWith('organization.'));
    expect(organizationTypes).toHaveLength(7);
    expect(unsent).toEqual(['user.email_verified', 'login.suspicious', ...organizationTypes]);
    const events = bullet('`events`');
    const end = events.indexOf(' are accepted but nothing in the service sends them yet');
    expect(end).toBeGreaterThan(0);
    const sentence = events.slice(events.lastIndexOf('. ', end) + 2, end);
    for (const type of unsent.filter((name) => !name.startsWith('organization.'))) expect(sentence, type).toContain(type);
    expect(sentence).toContain('the organization types');
  });

  it('describes the data of every type the service sends', () => {
    const data = bullet('`data`');
    // Either the full name, or its prefix with the rest listed beside it ("role.created, updated and deleted").
    const described = (type: string) => data.includes(type) || (data.includes(`${type.split('.')[0]}.`) && new RegExp(`\\b${type.split('.')[1]}\\b`).test(data));
    expect([...emitted].filter((type) => !described(type))).toEqual([]);
  });
});
