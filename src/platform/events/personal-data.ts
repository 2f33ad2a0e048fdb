import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { dataKeyOf, type DataKeys, type DataKeyState, type DataSubject } from '../crypto/data-keys.ts';
import type { EventMetadata, NewEvent, RecordedEvent } from '../eventstore/port.ts';
import type { EventCatalogue } from './catalogue.ts';
import { mapValuePaths, maskValuePaths } from './field-paths.ts';

/** What a personal field reads once its person was erased. */
export const ERASED = '[ERASED]';

/** A sealed field: `pd1.` then base64url of IV (12 bytes), GCM tag (16) and ciphertext of the value's JSON. */
const SEALED = 'pd1.';

function sealText(key: Buffer, text: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const ciphertext = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
  return SEALED + Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64url');
}

function openText(key: Buffer, sealed: string): string {
  const bytes = Buffer.from(sealed.slice(SEALED.length), 'base64url');
  const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, 12));
  decipher.setAuthTag(bytes.subarray(12, 28));
  return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8');
}

/** Per key, what one seal or reveal call already computed: a cipher's set-up costs more than its few bytes. */
const memo = () => {
  const byKey = new Map<Buffer, Map<string, string>>();
  return (key: Buffer, input: string, compute: (key: Buffer, input: string) => string): string => {
    let known = byKey.get(key);
    if (!known) byKey.set(key, (known = new Map()));
    let output = known.get(input);
    if (output === undefined) known.set(input, (output = compute(key, input)));
    return output;
  };
};

/**
 * Seals field values for one append: equal values under one key share one ciphertext (a login's
 * clientIp and userAgent are in both events' metadata and in the session's data: two seals, not six).
 * Equal ciphertexts show only that those fields are equal, which their meaning says anyway.
 */
function fieldSealer(recent: RecentSeals): (key: Buffer, value: unknown) => string {
  const once = memo();
  return (key, value) => once(key, JSON.stringify(value), recent.seal);
}

/** Opens sealed fields for one read: a ciphertext met again (the same value sealed once for several fields) is opened once. */
function fieldOpener(recent: RecentSeals): (key: Buffer, value: unknown) => unknown {
  const once = memo();
  return (key, value) => (typeof value === 'string' && value.startsWith(SEALED) ? JSON.parse(once(key, value, recent.open)) : value);
}

/** Sealed texts remembered for their reads: a few seconds of this instance's appends. */
const RECENT_SEALS = 256;

/**
 * The texts this instance sealed last, by ciphertext and key: the log's tail read that follows
 * every append (projections, relay) gets them back without a cipher, whose set-up costs more than
 * its few bytes. Opening a ciphertext under the key it was sealed with answers the sealed text, so
 * this answers the same; anything else is opened. Forgotten at once when the log shows an erasure
 * (the destroyed key is not kept here), and bounded otherwise.
 */
class RecentSeals {
  private readonly texts = new Map<string, { key: Buffer; text: string }>();

  readonly seal = (key: Buffer, text: string): string => {
    const sealed = sealText(key, text);
    this.texts.set(sealed, { key, text });
    if (this.texts.size > RECENT_SEALS) this.texts.delete(this.texts.keys().next().value!);
    return sealed;
  };

  readonly open = (key: Buffer, sealed: string): string => {
    const known = this.texts.get(sealed);
    return known && known.key.equals(key) ? known.text : openText(key, sealed);
  };

  forget(): void {
    this.texts.clear();
  }
}

type PersonalFields = { subject: DataSubject; paths: readonly string[] };

/** The request's metadata that identifies a person's device: personal data like the declared fields. */
const REQUEST_FIELDS = ['clientIp', 'userAgent'] as const;

const hasRequestData = (metadata: EventMetadata): boolean => REQUEST_FIELDS.some((field) => typeof metadata[field] === 'string');

function mapRequestData(metadata: EventMetadata, change: (value: string) => string): EventMetadata {
  const changed = { ...metadata };
  for (const field of REQUEST_FIELDS) {
    const value = metadata[field];
    if (typeof value === 'string') changed[field] = change(value);
  }
  return changed;
}

/**
 * Whose key an event's personal data uses, on append and on read alike: the person its fields
 * belong to (the catalogue's `dataSubject`), else, for the request metadata alone, the acting
 * user's (only if that person has a key in the event's tenant: see seal).
 */
interface KeyUse {
  subject: DataSubject;
  personal: PersonalFields | null;
}

/**
 * Crypto-shredding of personal data (docs/erasure.md), the one place that encrypts and decrypts
 * it. The catalogued event store seals the personal fields of every append, and the request's
 * clientIp and userAgent, with the data key of the person they belong to, and reveals them on
 * every read: clear values while the key exists, "[ERASED]" once it was destroyed, whether the
 * event was sealed or written in clear before encryption existed. Everything that reads through
 * the store (commands, projections, reactions, history, the relay, a replay) gets the same answer.
 */
export class PersonalDataCipher {
  private readonly recent = new RecentSeals();

  constructor(
    private readonly catalogue: EventCatalogue,
    private readonly keys: DataKeys,
  ) {}

  private keyUseOf(event: { type: string; data: unknown; metadata: EventMetadata }): KeyUse | null {
    const personal = this.catalogue.personalDataOf(event);
    if (personal) return { subject: personal.subject, personal };
    const actor = hasRequestData(event.metadata) ? this.catalogue.actorDataSubjectOf(event.metadata) : null;
    return actor ? { subject: actor, personal: null } : null;
  }

  /**
   * `events` as they must be written: personal fields and request metadata sealed, or "[ERASED]"
   * for an erased person. The data subject's key is created if missing; an actor's key is only
   * used if it exists (an OAuth client or a platform operator acting in a tenant has none there,
   * and their request metadata stays in clear). One key statement per append at most.
   */
  async seal(events: NewEvent[]): Promise<NewEvent[]> {
    const uses = events.map((event) => this.keyUseOf(event));
    if (uses.every((use) => use === null)) return events;
    const keys = await this.keys.keysForWriting(
      uses.flatMap((use) => (use?.personal ? [use.subject] : [])),
      uses.flatMap((use) => (use && !use.personal ? [use.subject] : [])),
    );
    const sealField = fieldSealer(this.recent);
    return events.map((event, i) => {
      const use = uses[i];
      if (!use) return event;
      const state = keys.get(dataKeyOf(use.subject))!;
      const paths = use.personal?.paths ?? [];
      if (state === 'none') return event;
      if (state === 'erased') return { ...event, data: maskValuePaths(event.data, paths, ERASED), metadata: mapRequestData(event.metadata, () => ERASED) };
      return {
        ...event,
        data: mapValuePaths(event.data, paths, (value) => sealField(state.key, value)),
        metadata: { ...mapRequestData(event.metadata, (value) => sealField(state.key, value)), personalDataKey: use.subject.subject },
      };
    });
  }

  /** `events` as readers see them: personal data in clear, or "[ERASED]". One key query per batch at most. */
  async reveal<Event extends RecordedEvent>(events: Event[]): Promise<Event[]> {
    for (const event of events) {
      const erased = this.catalogue.erasedSubjectOf(event);
      if (erased) {
        this.keys.markErased(erased);
        this.recent.forget();
      }
    }
    const uses = events.map((event) => this.readKeyUse(event));
    const wanted = uses.flatMap((use) => (use ? [use.subject] : []));
    if (wanted.length === 0) return events;
    const states = await this.keys.states(wanted);
    // A sealed event whose key this instance remembered as absent: another instance created it since.
    const stale = events.flatMap((event, i) => {
      const subject = uses[i]?.subject;
      return subject && event.metadata.personalDataKey && states.get(dataKeyOf(subject)) === 'none' ? [subject] : [];
    });
    if (stale.length > 0) for (const [key, state] of await this.keys.states(stale, { reload: true })) states.set(key, state);
    const openField = fieldOpener(this.recent);
    return events.map((event, i) => this.revealOne(event, uses[i] ?? null, states, openField));
  }

  /** The key a read needs: the one the event was sealed with, else (written in clear) the one it would be sealed with, for erasure. */
  private readKeyUse(event: RecordedEvent): KeyUse | null {
    const { personalDataKey, tenantId } = event.metadata;
    const use = this.keyUseOf(event);
    if (!personalDataKey) return use;
    return { subject: { tenantId, subject: personalDataKey }, personal: use?.personal ?? null };
  }

  private revealOne<Event extends RecordedEvent>(event: Event, use: KeyUse | null, states: Map<string, DataKeyState>, openField: ReturnType<typeof fieldOpener>): Event {
    if (!use) return event;
    const { personalDataKey, ...metadata } = event.metadata;
    const paths = use.personal?.paths ?? [];
    const state = states.get(dataKeyOf(use.subject));
    if (state === 'erased') return { ...event, data: maskValuePaths(event.data, paths, ERASED), metadata: mapRequestData(metadata, () => ERASED) };
    if (!personalDataKey) return event;
    if (state === undefined || state === 'none') throw new Error(`event ${event.id}: the data key of its personal data is missing`);
    return {
      ...event,
      data: mapValuePaths(event.data, paths, (value) => openField(state.key, value)),
      metadata: mapRequestData(metadata, (value) => openField(state.key, value) as string),
    };
  }
}
