import { randomBytes } from 'node:crypto';
import type { Queryable } from '../db/pool.ts';
import type { SecretBox } from './secret-box.ts';

/** A data subject (a person) in a tenant: `subject` names the person's aggregate stream. */
export interface DataSubject {
  tenantId: string;
  subject: string;
}

/** A subject's key; `erased` once destroyed; `none` while nothing personal was ever encrypted for it. */
export type DataKeyState = { key: Buffer } | 'erased' | 'none';

/** How many subjects' states an instance keeps (a hot replay touches each subject's key once per batch at most). */
export const DATA_KEY_CACHE_SIZE = 10_000;

const cacheKey = ({ tenantId, subject }: DataSubject) => `${tenantId}\u0000${subject}`;

interface KeyRow {
  tenant_id: string;
  subject: string;
  wrapped_key: string | null;
}

/**
 * Per-subject data keys (migration 0016), wrapped by the master key, with a bounded LRU cache per
 * instance: a batch of events costs at most one query for the subjects it has not seen. Erasure
 * destroys the wrapped key and leaves a tombstone; an erased state is final, so it is cached for
 * good, and `markErased` lets every instance learn it from the log (the erasure event) at once.
 */
export class DataKeys {
  private readonly cache = new Map<string, DataKeyState>();

  constructor(
    private readonly db: Queryable,
    private readonly box: SecretBox,
    private readonly capacity = DATA_KEY_CACHE_SIZE,
  ) {}

  /** The states of `subjects`; `reload` bypasses the cache (a key another instance created since). */
  async states(subjects: DataSubject[], options: { reload?: boolean } = {}): Promise<Map<string, DataKeyState>> {
    const result = new Map<string, DataKeyState>();
    const missing: DataSubject[] = [];
    for (const subject of unique(subjects)) {
      const cached = options.reload ? undefined : this.recall(cacheKey(subject));
      if (cached) result.set(cacheKey(subject), cached);
      else missing.push(subject);
    }
    if (missing.length === 0) return result;
    const { rows } = await this.db.query<KeyRow>(
      `select k.tenant_id, k.subject, k.wrapped_key from personal_data_keys k
         join unnest($1::text[], $2::text[]) as w(tenant_id, subject) using (tenant_id, subject)`,
      [missing.map((s) => s.tenantId), missing.map((s) => s.subject)],
    );
    const found = new Map(rows.map((row) => [cacheKey({ tenantId: row.tenant_id, subject: row.subject }), this.stateOf(row)]));
    for (const subject of missing) {
      const state = found.get(cacheKey(subject)) ?? 'none';
      result.set(cacheKey(subject), state);
      this.remember(cacheKey(subject), state);
    }
    return result;
  }

  /**
   * The keys to encrypt with: created for `subjects` that have none, erased ones stay erased; the
   * keys of `existingOnly` subjects are used if they exist and never created ('none' otherwise).
   * One statement for all the subjects this instance does not know yet.
   */
  async keysForWriting(subjects: DataSubject[], existingOnly: DataSubject[] = []): Promise<Map<string, DataKeyState>> {
    const result = new Map<string, DataKeyState>();
    const creating = new Set(subjects.map(cacheKey));
    let unknown: DataSubject[] = [];
    for (const subject of unique([...subjects, ...existingOnly])) {
      const cached = this.recall(cacheKey(subject));
      if (cached && (cached !== 'none' || !creating.has(cacheKey(subject)))) result.set(cacheKey(subject), cached);
      else unknown.push(subject);
    }
    // Two rounds at most: a key another transaction was inserting meanwhile is read back in the second.
    for (let round = 0; unknown.length > 0; round += 1) {
      if (round === 2) throw new Error('a data key was created but cannot be read back');
      const rows = await this.createOrRead(unknown, creating);
      for (const row of rows) {
        const state = this.stateOf(row);
        result.set(cacheKey({ tenantId: row.tenant_id, subject: row.subject }), state);
        this.remember(cacheKey({ tenantId: row.tenant_id, subject: row.subject }), state);
      }
      for (const subject of unknown.filter((s) => !result.has(cacheKey(s)) && !creating.has(cacheKey(s)))) {
        result.set(cacheKey(subject), 'none');
        this.remember(cacheKey(subject), 'none');
      }
      unknown = unknown.filter((subject) => !result.has(cacheKey(subject)));
    }
    return result;
  }

  /**
   * New keys for the subjects to create without a row, the existing rows of all. Committed before
   * the events that use them: an event never refers to a key that was not stored.
   */
  private async createOrRead(subjects: DataSubject[], creating: Set<string>): Promise<KeyRow[]> {
    const { rows } = await this.db.query<KeyRow>(
      `with wanted as (select * from unnest($1::text[], $2::text[], $3::text[]) as w(tenant_id, subject, wrapped_key)),
            created as (insert into personal_data_keys (tenant_id, subject, wrapped_key) select * from wanted where wrapped_key is not null
                        on conflict do nothing returning tenant_id, subject, wrapped_key)
       select * from created
       union all
       select k.tenant_id, k.subject, k.wrapped_key from personal_data_keys k join wanted using (tenant_id, subject)`,
      [
        subjects.map((s) => s.tenantId),
        subjects.map((s) => s.subject),
        subjects.map((s) => (creating.has(cacheKey(s)) ? this.box.seal(randomBytes(32).toString('base64url')) : null)),
      ],
    );
    return rows;
  }

  /** Destroys the subject's key for good (idempotent; a subject without a key gets a tombstone). */
  async erase(subject: DataSubject): Promise<void> {
    await this.db.query(
      `insert into personal_data_keys (tenant_id, subject, wrapped_key, erased_at) values ($1, $2, null, now())
       on conflict (tenant_id, subject) do update set wrapped_key = null, erased_at = coalesce(personal_data_keys.erased_at, now())`,
      [subject.tenantId, subject.subject],
    );
    this.markErased(subject);
  }

  /** Forgets a destroyed key in this instance (the log said so before this cache could know). */
  markErased(subject: DataSubject): void {
    this.remember(cacheKey(subject), 'erased');
  }

  private stateOf(row: KeyRow): DataKeyState {
    return row.wrapped_key === null ? 'erased' : { key: Buffer.from(this.box.open(row.wrapped_key), 'base64url') };
  }

  private recall(key: string): DataKeyState | undefined {
    const state = this.cache.get(key);
    if (state !== undefined) this.remember(key, state);
    return state;
  }

  private remember(key: string, state: DataKeyState): void {
    this.cache.delete(key);
    this.cache.set(key, state);
    if (this.cache.size > this.capacity) this.cache.delete(this.cache.keys().next().value!);
  }
}

export const dataKeyOf = cacheKey;

function unique(subjects: DataSubject[]): DataSubject[] {
  return [...new Map(subjects.map((s) => [cacheKey(s), s])).values()];
}
