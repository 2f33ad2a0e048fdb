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
/** A map is kept when it holds at most this many entries (old walks' ones included), so a huge answer is not kept alive. */
const MAX_KEPT_ENTRIES = 200_000;
/** Stale entries allowed beyond twice the walk's own: a map whose ids mostly belong to older walks is dropped. */
const STALE_ALLOWANCE = 1_024;

const idle = new Map<string, Map<string, number>[]>();
let idleCount = 0;
let nextBase = 0;
/** Counts the restarts of the ranges: a map lent before one is not kept after it. */
let generation = 0;

/** The maps of one walk, with values in `[0, span)`. */
export class FactMaps {
  private readonly base: number;
  private readonly generation: number;
  private readonly borrowed: { relation: string; map: Map<string, number>; owned: number }[] = [];

  constructor(private readonly span: number) {
    if (span <= 0 || span >= VALUE_LIMIT) throw new RangeError(`span ${span} out of range`);
    // Ranges start over (and the kept maps, which may hold values of any range, go) once exhausted.
    if (nextBase + span > VALUE_LIMIT) {
      nextBase = 0;
      idle.clear();
      idleCount = 0;
      generation += 1;
    }
    this.generation = generation;
    this.base = nextBase;
    nextBase += span;
  }

  /** A map for this walk's facts about `relation` (a type#relation key), empty as far as it can tell. */
  open(relation: string): FactMap {
    const entry = { relation, map: this.reuse(relation) ?? new Map<string, number>(), owned: 0 };
    this.borrowed.push(entry);
    const { base, span } = this;
    const own = (value: number | undefined): value is number => value !== undefined && value >= base && value < base + span;
    return {
      get: (id) => {
        const value = entry.map.get(id);
        return own(value) ? value - base : undefined;
      },
      set: (id, value) => {
        if (value < 0 || value >= span) throw new RangeError(`value ${value} out of range`);
        if (!own(entry.map.get(id))) entry.owned += 1;
        entry.map.set(id, base + value);
      },
      get size() {
        return entry.owned;
      },
      forEach: (visit) =>
        entry.map.forEach((value, id) => {
          if (own(value)) visit(value - base, id);
        }),
    };
  }

  /** Gives the maps back; none of them may be used after. */
  close(): void {
    for (const { relation, map, owned } of this.borrowed.splice(0)) {
      if (this.generation !== generation || idleCount >= POOL_SIZE || map.size > Math.min(MAX_KEPT_ENTRIES, 2 * owned + STALE_ALLOWANCE)) continue;
      const kept = idle.get(relation);
      if (kept) kept.push(map);
      else idle.set(relation, [map]);
      idleCount += 1;
    }
  }

  private reuse(relation: string): Map<string, number> | undefined {
    const kept = idle.get(relation);
    const map = kept?.pop();
    if (!map) return undefined;
    if (kept!.length === 0) idle.delete(relation);
    idleCount -= 1;
    return map;
  }
}

export interface FactMap {
  /** Ids this walk set. */
  readonly size: number;
  get(id: string): number | undefined;
  set(id: string, value: number): void;
  forEach(visit: (value: number, id: string) => void): void;
}
