/**
 * Maps from object id to a small integer, lent to one list-objects walk at a time and kept for
 * the next walks. A Map of 20,000 ids is a megabyte of hash table (a large object in V8, promoted
 * whenever a young-generation collection meets it mid-walk, then kept until a full collection);
 * clearing one frees its table too. So a map is never cleared: each walk owns a range of values
 * no earlier walk used (`[base, base + span)`), and an entry outside its range reads as absent.
 * Overwriting an entry allocates nothing, so walks of the same size reuse the same tables.
 */

/** Values stay small integers (no boxed number per entry). */
const VALUE_LIMIT = 2 ** 30;
/** Maps kept between walks (by relation, whose answers tend to keep their size); more walks at once get fresh maps. */
const POOL_SIZE = 32;
/** Entries of all kept maps together (old walks' included): what the pool may hold on to, about 15 MB of tables. */
const MAX_KEPT_ENTRIES = 500_000;
/** Stale entries allowed beyond twice the largest walk a map served: one filled mostly by ids no walk sees any more is dropped. */
const STALE_ALLOWANCE = 1_024;

interface Kept {
  map: Map<string, number>;
  /** The most ids one walk set in this map. */
  largestWalk: number;
}

const idle = new Map<string, Kept[]>();
let idleCount = 0;
let idleEntries = 0;
let nextBase = 0;
/** Counts the restarts of the ranges: a map lent before one is not kept after it. */
let generation = 0;

/** The maps of one walk, with values in `[0, span)`. */
export class FactMaps {
  private readonly base: number;
  private readonly generation: number;
  private readonly borrowed: { relation: string; kept: Kept; owned: number }[] = [];

  constructor(private readonly span: number) {
    if (span <= 0 || span >= VALUE_LIMIT) throw new RangeError(`span ${span} out of range`);
    // Ranges start over (and the kept maps, which may hold values of any range, go) once exhausted.
    if (nextBase + span > VALUE_LIMIT) {
      nextBase = 0;
      idle.clear();
      idleCount = 0;
      idleEntries = 0;
      generation += 1;
    }
    this.generation = generation;
    this.base = nextBase;
    nextBase += span;
  }

  /** A map for this walk's facts about `relation` (a type#relation key), empty as far as it can tell. */
  open(relation: string): FactMap {
    const entry = { relation, kept: reuse(relation) ?? { map: new Map<string, number>(), largestWalk: 0 }, owned: 0 };
    this.borrowed.push(entry);
    const { map } = entry.kept;
    const { base, span } = this;
    const own = (value: number | undefined): value is number => value !== undefined && value >= base && value < base + span;
    return {
      get size() {
        return entry.owned;
      },
      get: (id) => {
        const value = map.get(id);
        return own(value) ? value - base : undefined;
      },
      set: (id, value) => {
        if (value < 0 || value >= span) throw new RangeError(`value ${value} out of range`);
        if (!own(map.get(id))) entry.owned += 1;
        map.set(id, base + value);
      },
      forEach: (visit) =>
        map.forEach((value, id) => {
          if (own(value)) visit(value - base, id);
        }),
    };
  }

  /** Gives the maps back; none of them may be used after. */
  close(): void {
    for (const { relation, kept, owned } of this.borrowed.splice(0)) {
      kept.largestWalk = Math.max(kept.largestWalk, owned);
      const { size } = kept.map;
      if (this.generation !== generation || idleCount >= POOL_SIZE || idleEntries + size > MAX_KEPT_ENTRIES || size > 2 * kept.largestWalk + STALE_ALLOWANCE) continue;
      const list = idle.get(relation);
      if (list) list.push(kept);
      else idle.set(relation, [kept]);
      idleCount += 1;
      idleEntries += size;
    }
  }
}

function reuse(relation: string): Kept | undefined {
  const list = idle.get(relation);
  const kept = list?.pop();
  if (!kept) return undefined;
  if (list!.length === 0) idle.delete(relation);
  idleCount -= 1;
  idleEntries -= kept.map.size;
  return kept;
}

export interface FactMap {
  /** Ids this walk set. */
  readonly size: number;
  get(id: string): number | undefined;
  set(id: string, value: number): void;
  forEach(visit: (value: number, id: string) => void): void;
}
