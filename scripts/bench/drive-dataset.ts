/**
 * The Google-Drive-like authorization dataset both FGA benchmarks use: users, groups with nested
 * groups, folders with parent folders, documents with owner/editor/viewer and viewer-from-parent,
 * ~1,010,000 tuples, deterministic (same seed, same tuples, same samples).
 */
import type { CheckRequest } from '../../src/modules/fga/engine/authorization-engine.ts';
import { parseTuple } from '../../src/modules/fga/tuple.ts';
import { legacyTupleStreamId } from '../../src/modules/fga/tuples/events.ts';
import { systemClock } from '../../src/platform/clock.ts';
import { toNewEvents } from '../../src/platform/commands/handle-command.ts';
import type { EventStore, StreamAppend } from '../../src/platform/eventstore/port.ts';
import { fmt } from './support.ts';

export const DRIVE_MODEL = `
model
  schema 1.1
type user
type group
  relations
    define member: [user, group#member]
type folder
  relations
    define parent: [folder]
    define owner: [user]
    define editor: [user, group#member] or owner or editor from parent
    define viewer: [user, user:*, group#member] or editor or viewer from parent
type document
  relations
    define parent: [folder]
    define owner: [user]
    define editor: [user, group#member] or owner or editor from parent
    define viewer: [user, user:*, group#member] or editor or viewer from parent
`;

export const USERS = 20_000;
export const GROUPS = 2_000;
export const FOLDERS = 10_000;
export const DOCUMENTS = 200_000;

// Deterministic pseudo-random numbers (mulberry32), so runs are comparable.
let seed = 42;
function random(): number {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
export const pick = (n: number): number => Math.floor(random() * n);

/** Emits every tuple in text form (a few random picks repeat a tuple: dedupe if it matters). */
export function driveTuples(add: (text: string) => void): void {
  for (let g = 0; g < GROUPS; g += 1) {
    for (let m = 0; m < 40; m += 1) add(`group:g${g}#member@user:u${pick(USERS)}`);
    // A quarter of the groups are nested in a group with a lower number (no cycles, depth ~3).
    if (g > 100 && g % 4 === 0) add(`group:g${pick(g)}#member@group:g${g}#member`);
  }
  for (let f = 0; f < FOLDERS; f += 1) {
    // Each folder below the 100 roots has a parent with a lower number: trees ~9 levels deep.
    if (f >= 100) add(`folder:f${f}#parent@folder:f${pick(f)}`);
    add(`folder:f${f}#owner@user:u${pick(USERS)}`);
    add(`folder:f${f}#viewer@group:g${pick(GROUPS)}#member`);
    if (f % 3 === 0) add(`folder:f${f}#editor@group:g${pick(GROUPS)}#member`);
  }
  for (let d = 0; d < DOCUMENTS; d += 1) {
    add(`document:d${d}#parent@folder:f${pick(FOLDERS)}`);
    add(`document:d${d}#owner@user:u${pick(USERS)}`);
    add(`document:d${d}#viewer@user:u${pick(USERS)}`);
    add(`document:d${d}#viewer@user:u${pick(USERS)}`);
    if (d % 2 === 0) add(`document:d${d}#editor@user:u${pick(USERS)}`);
    if (d % 2000 === 0) add(`document:d${d}#viewer@user:*`);
  }
  // alice sees exactly 1,000 documents: 880 under her team's folder tree (root > 8 folders > 10
  // folders each > 11 documents each), 20 shared with her directly and the 100 public ones.
  aliceTuples(add);
}

/** The few hundred tuples through which alice sees her documents (2 nested groups, 3 folder levels). */
export function aliceTuples(add: (text: string) => void): void {
  add('group:alice-team#member@user:alice');
  add('group:alice-org#member@group:alice-team#member');
  add('folder:alice-root#viewer@group:alice-org#member');
  for (let s = 0; s < 8; s += 1) {
    add(`folder:alice-sub${s}#parent@folder:alice-root`);
    for (let t = 0; t < 10; t += 1) {
      add(`folder:alice-sub${s}-${t}#parent@folder:alice-sub${s}`);
      for (let d = 0; d < 11; d += 1) add(`document:alice-doc${s}-${t}-${d}#parent@folder:alice-sub${s}-${t}`);
    }
  }
  for (let d = 0; d < 20; d += 1) add(`document:alice-direct${d}#viewer@user:alice`);
}

export const viewerCheck = (user: string, document: string): CheckRequest => ({
  objectType: 'document',
  objectId: document,
  relation: 'viewer',
  subjectType: 'user',
  subjectId: user,
});

/** A document alice sees through 2 nested groups and 3 folder levels. */
export const aliceDocument = (): string => `alice-doc${pick(8)}-${pick(10)}-${pick(11)}`;

type Inject = (method: string, url: string, body?: unknown, token?: string) => Promise<{ data: { id: string } }>;

/** Creates and activates the Drive model through the API; answers its id. */
export async function activateDriveModel(inject: Inject, token: string): Promise<string> {
  const modelId = (await inject('POST', '/api/fga/models', { name: 'drive', dsl: DRIVE_MODEL }, token)).data.id;
  await inject('POST', `/api/fga/models/${modelId}/activate`, {}, token);
  return modelId;
}

/**
 * Appends one FgaTupleWritten per tuple stream (the events the API appends), `batch` streams per
 * multi-stream append, `appenders` appends at a time; answers the last position.
 */
export async function appendTuples(
  store: EventStore,
  tenant: string,
  modelId: string,
  texts: string[],
  { batch = 1000, appenders = 3, progress = false } = {},
): Promise<bigint> {
  const context = { tenantId: tenant, actor: 'bench' };
  let next = 0;
  let last = 0n;
  await Promise.all(
    Array.from({ length: appenders }, async () => {
      while (next < texts.length) {
        const start = next;
        next += batch;
        const appends: StreamAppend[] = texts.slice(start, next).map((text) => {
          const tuple = parseTuple(text);
          const events = toNewEvents([{ type: 'FgaTupleWritten', data: { tuple, modelId } }], context, systemClock);
          return { streamId: legacyTupleStreamId(tenant, tuple), expectedRevision: 'no_stream', events };
        });
        const results = await store.appendMulti(appends);
        for (const { position } of results) if (position > last) last = position;
        if (progress && next % 100_000 < batch) process.stdout.write(`  ${fmt(Math.min(next, texts.length))} appended\r`);
      }
    }),
  );
  return last;
}
