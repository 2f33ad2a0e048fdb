import type { RelationTuple } from '../tuple.ts';
import type { ObjectIdsQuery, SubjectIdsQuery, TupleReader } from './tuple-reader.ts';

/** The four names shared by every tuple of one index family. */
interface Family {
  objectType: string;
  relation: string;
  subjectType: string;
  subjectRelation: string | undefined;
  /** outer id (object id or subject id) -> inner ids: one id as itself, more as a set */
  ids: Map<string, string | Set<string>>;
}

/**
 * Tuples grouped by family (the four names) then by one id, giving the set of the other ids. One
 * instance indexes object -> subjects, another subject -> objects. Families are found through
 * nested maps keyed by the names themselves rather than by a concatenated key: names are reused
 * strings whose hashes V8 caches, so a lookup builds and hashes no new string. Most outer ids
 * have one inner id (a document's owner, a folder's parent): a lone id is kept as itself, not in a
 * Set of its own, which saves about a third of the memory at a million tuples.
 */
class FamilyIndex {
  private readonly families = new Map<string, Map<string, Map<string, Map<string, Family>>>>();

  /** The family of four names (no array or key built: lookups are the engine's inner loop). */
  find(first: string, second: string, third: string, fourth: string): Family | undefined {
    return this.families.get(first)?.get(second)?.get(third)?.get(fourth);
  }

  add(names: FamilyNames, tuple: RelationTuple, outerId: string, innerId: string): boolean {
    const family = this.family(names, tuple);
    const inner = family.ids.get(outerId);
    if (inner === undefined) {
      family.ids.set(outerId, innerId);
      return true;
    }
    if (typeof inner === 'string') {
      if (inner === innerId) return false;
      family.ids.set(outerId, new Set([inner, innerId]));
      return true;
    }
    const before = inner.size;
    inner.add(innerId);
    return inner.size > before;
  }

  remove(names: FamilyNames, outerId: string, innerId: string): boolean {
    const family = this.family(names);
    const inner = family?.ids.get(outerId);
    if (!family || inner === undefined) return false;
    if (typeof inner === 'string') {
      if (inner !== innerId) return false;
      family.ids.delete(outerId);
      return true;
    }
    if (!inner.delete(innerId)) return false;
    // Back to a lone id, so a churning store does not grow; families (a few per relation) stay.
    if (inner.size === 1) family.ids.set(outerId, inner.values().next().value!);
    return true;
  }

  *entries(): IterableIterator<[Family, string, string]> {
    for (const level1 of this.families.values()) {
      for (const level2 of level1.values()) {
        for (const level3 of level2.values()) {
          for (const family of level3.values()) {
            for (const [outerId, inner] of family.ids) {
              if (typeof inner === 'string') yield [family, outerId, inner];
              else for (const innerId of inner) yield [family, outerId, innerId];
            }
          }
        }
      }
    }
  }

  /** Finds the family; given a tuple, creates it (named after that tuple) when missing. */
  private family(names: FamilyNames): Family | undefined;
  private family(names: FamilyNames, creatingFrom: RelationTuple): Family;
  private family(names: FamilyNames, creatingFrom?: RelationTuple): Family | undefined {
    const [first, second, third, fourth] = names;
    const found = this.find(first, second, third, fourth);
    if (found || !creatingFrom) return found;
    let level1 = this.families.get(first);
    let level2 = level1?.get(second);
    let level3 = level2?.get(third);
    if (!level1) this.families.set(first, (level1 = new Map()));
    if (!level2) level1.set(second, (level2 = new Map()));
    if (!level3) level2.set(third, (level3 = new Map()));
    const { objectType, relation, subjectType, subjectRelation } = creatingFrom;
    const family: Family = { objectType, relation, subjectType, subjectRelation, ids: new Map() };
    level3.set(fourth, family);
    return family;
  }
}

type FamilyNames = readonly [string, string, string, string];

type Names = Pick<RelationTuple, 'objectType' | 'relation' | 'subjectType' | 'subjectRelation'>;

function subjectsFamily({ objectType, relation, subjectType, subjectRelation }: Names): FamilyNames {
  return [objectType, relation, subjectType, subjectRelation ?? ''];
}

function objectsFamily({ objectType, relation, subjectType, subjectRelation }: Names): FamilyNames {
  return [subjectType, subjectRelation ?? '', objectType, relation];
}

/** An array, not an empty Set: the check's unions walk arrays without an iterator or a reducer (outcome.ts anyOf). */
const NONE: readonly string[] = Object.freeze([]);

/** The inner ids of one outer id in a family (a lone id as a one-element list). */
function idsOf(family: Family | undefined, outerId: string): Iterable<string> {
  const inner = family?.ids.get(outerId);
  return typeof inner === 'string' ? [inner] : (inner ?? NONE);
}

/**
 * In-memory tuple index in both directions (object -> subjects for check and expand, subject ->
 * objects for list-objects). It knows nothing of tenants or models: keep one per tenant and feed
 * it from the tuple projection. Answers synchronously.
 */
export class MemoryTupleStore implements TupleReader {
  private readonly subjects = new FamilyIndex();
  private readonly objects = new FamilyIndex();
  private count = 0;
  private changes = 0;

  static of(tuples: Iterable<RelationTuple>): MemoryTupleStore {
    const store = new MemoryTupleStore();
    for (const tuple of tuples) store.add(tuple);
    return store;
  }

  get size(): number {
    return this.count;
  }

  /** Grows with every tuple added or removed: an answer computed at one version holds while it stays. */
  get version(): number {
    return this.changes;
  }

  /** Adds a tuple; false when it was already stored. */
  add(tuple: RelationTuple): boolean {
    if (!this.subjects.add(subjectsFamily(tuple), tuple, tuple.objectId, tuple.subjectId)) return false;
    this.objects.add(objectsFamily(tuple), tuple, tuple.subjectId, tuple.objectId);
    this.count += 1;
    this.changes += 1;
    return true;
  }

  /** Removes a tuple; false when it was not stored. */
  remove(tuple: RelationTuple): boolean {
    if (!this.subjects.remove(subjectsFamily(tuple), tuple.objectId, tuple.subjectId)) return false;
    this.objects.remove(objectsFamily(tuple), tuple.subjectId, tuple.objectId);
    this.count -= 1;
    this.changes += 1;
    return true;
  }

  *tuples(): IterableIterator<RelationTuple> {
    for (const [family, objectId, subjectId] of this.subjects.entries()) {
      const tuple: RelationTuple = {
        objectType: family.objectType,
        objectId,
        relation: family.relation,
        subjectType: family.subjectType,
        subjectId,
      };
      if (family.subjectRelation !== undefined) tuple.subjectRelation = family.subjectRelation;
      yield tuple;
    }
  }

  readSubjectIds(query: SubjectIdsQuery): Iterable<string> {
    const family = this.subjects.find(query.objectType, query.relation, query.subjectType, query.subjectRelation ?? '');
    return idsOf(family, query.objectId);
  }

  readObjectIds(query: ObjectIdsQuery): Iterable<string> {
    const family = this.objects.find(query.subjectType, query.subjectRelation ?? '', query.objectType, query.relation);
    return idsOf(family, query.subjectId);
  }

  hasTuple(tuple: RelationTuple): boolean {
    const inner = this.subjects.find(tuple.objectType, tuple.relation, tuple.subjectType, tuple.subjectRelation ?? '')?.ids.get(tuple.objectId);
    return typeof inner === 'string' ? inner === tuple.subjectId : (inner?.has(tuple.subjectId) ?? false);
  }
}
