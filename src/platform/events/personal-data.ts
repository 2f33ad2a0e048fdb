import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { dataKeyOf, type DataKeys, type DataKeyState, type DataSubject } from '../crypto/data-keys.ts';
import type { NewEvent, RecordedEvent } from '../eventstore/port.ts';
import type { EventCatalogue } from './catalogue.ts';
import { mapValuePaths, maskValuePaths } from './field-paths.ts';

/** What a personal field reads once its person was erased. */
export const ERASED = '[ERASED]';

/** A sealed field: `pd1.` then base64url of IV (12 bytes), GCM tag (16) and ciphertext of the value's JSON. */
const SEALED = 'pd1.';

function sealField(key: Buffer, value: unknown): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const ciphertext = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
  return SEALED + Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64url');
}

function openField(key: Buffer, value: unknown): unknown {
  if (typeof value !== 'string' || !value.startsWith(SEALED)) return value;
  const bytes = Buffer.from(value.slice(SEALED.length), 'base64url');
  const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, 12));
  decipher.setAuthTag(bytes.subarray(12, 28));
  return JSON.parse(Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8'));
}

type PersonalFields = { subject: DataSubject; paths: readonly string[] };

/** The key a read needs: the one the event was sealed with, else (written in clear) its person's, for erasure. */
function subjectOf(event: RecordedEvent, personal: PersonalFields | null): DataSubject | null {
  const { personalDataKey, tenantId } = event.metadata;
  if (personalDataKey) return { tenantId, subject: personalDataKey };
  return personal?.subject ?? null;
}

/**
 * Crypto-shredding of personal data (docs/erasure.md), the one place that encrypts and decrypts
 * it. The catalogued event store seals the personal fields of every append with the data key of
 * the person they belong to (the catalogue's `dataSubject`), and reveals them on every read: clear
 * values while the key exists, "[ERASED]" once it was destroyed, whether the event was sealed or
 * written in clear before encryption existed. Everything that reads through the store (commands,
 * projections, reactions, history, the relay, a replay) gets the same answer.
 */
export class PersonalDataCipher {
  constructor(
    private readonly catalogue: EventCatalogue,
    private readonly keys: DataKeys,
  ) {}

  /** `events` as they must be written: personal fields sealed, or "[ERASED]" for an erased person. */
  async seal(events: NewEvent[]): Promise<NewEvent[]> {
    const personal = events.map((event) => this.catalogue.personalDataOf(event));
    const subjects = personal.flatMap((p) => (p ? [p.subject] : []));
    if (subjects.length === 0) return events;
    const keys = await this.keys.keysForWriting(subjects);
    return events.map((event, i) => {
      const fields = personal[i];
      if (!fields) return event;
      const state = keys.get(dataKeyOf(fields.subject))!;
      if (state === 'erased') return { ...event, data: maskValuePaths(event.data, fields.paths, ERASED) };
      return {
        ...event,
        data: mapValuePaths(event.data, fields.paths, (value) => sealField(state.key, value)),
        metadata: { ...event.metadata, personalDataKey: fields.subject.subject },
      };
    });
  }

  /** `events` as readers see them: personal fields in clear, or "[ERASED]". One key query per batch at most. */
  async reveal<Event extends RecordedEvent>(events: Event[]): Promise<Event[]> {
    for (const event of events) {
      const erased = this.catalogue.erasedSubjectOf(event);
      if (erased) this.keys.markErased(erased);
    }
    const personal = events.map((event) => this.catalogue.personalDataOf(event));
    const subjects = events.map((event, i) => subjectOf(event, personal[i] ?? null));
    const wanted = subjects.filter((subject) => subject !== null);
    if (wanted.length === 0) return events;
    const states = await this.keys.states(wanted);
    // A sealed event whose key this instance remembered as absent: another instance created it since.
    const stale = events.flatMap((event, i) => {
      const subject = subjects[i];
      return subject && event.metadata.personalDataKey && states.get(dataKeyOf(subject)) === 'none' ? [subject] : [];
    });
    if (stale.length > 0) for (const [key, state] of await this.keys.states(stale, { reload: true })) states.set(key, state);
    return events.map((event, i) => this.revealOne(event, personal[i] ?? null, states));
  }

  private revealOne<Event extends RecordedEvent>(event: Event, personal: PersonalFields | null, states: Map<string, DataKeyState>): Event {
    if (!personal) return event;
    const { personalDataKey, ...metadata } = event.metadata;
    const state = states.get(dataKeyOf(subjectOf(event, personal)!));
    if (state === 'erased') return { ...event, data: maskValuePaths(event.data, personal.paths, ERASED), metadata };
    if (!personalDataKey) return event;
    if (state === undefined || state === 'none') throw new Error(`event ${event.id}: the data key of its personal fields is missing`);
    return { ...event, data: mapValuePaths(event.data, personal.paths, (value) => openField(state.key, value)), metadata };
  }
}
