import { FgaError } from '../errors.ts';
import type { Subject } from '../tuple.ts';
import { WILDCARD_ID } from '../tuple.ts';
import type { TypeSystem } from '../typesystem.ts';
import type { CheckOptions } from './check.ts';
import { CheckResolver } from './check.ts';
import { FactMaps, type FactMap } from './fact-maps.ts';
import { isPromise } from './maybe-async.ts';
import { Outcome } from './outcome.ts';
import type { ReverseEdge } from './reverse-graph.ts';
import { ReverseGraph, relationKey } from './reverse-graph.ts';
import type { ObjectIdsQuery, TupleReader } from './tuple-reader.ts';

/** "The subject has `relation` on `type:id`", proven (`definite`) or still to be confirmed by a check. */
interface Fact {
  type: string;
  id: string;
  relation: string;
  definite: boolean;
}

/**
 * The facts learnt about one relation (`type#relation`), by object id. A fact is one number,
 * `depth * 2 + (definite ? 1 : 0)` (depth: dispatches between the object and the subject on the
 * shortest path of its kind, counted up to the maximum depth), so a large answer allocates no
 * object per id; the map is lent by FactMaps, so walks of the same size reuse one hash table.
 */
interface RelationFacts {
  type: string;
  relation: string;
  byId: FactMap;
  /** The model's edges out of this relation that can lead to the target, resolved once per walk. */
  steps?: Step[];
}

interface Step {
  edge: ReverseEdge;
  into: RelationFacts;
}

/** Depths past the maximum read the same (too deep); a bound on it keeps every fact a small integer. */
const MAX_RECORDED_DEPTH = 2 ** 20;
const packed = (depth: number, definite: boolean): number => depth * 2 + (definite ? 1 : 0);
const isDefinite = (fact: number): boolean => fact % 2 === 1;
const depthOf = (fact: number): number => Math.floor(fact / 2);

/**
 * Facts still to expand, in parallel arrays (a relation's facts and an id per fact; whether it is
 * definite): one level of the walk costs three array slots per fact, no object.
 */
class Frontier {
  readonly relations: RelationFacts[] = [];
  readonly ids: string[] = [];
  readonly definite: boolean[] = [];

  push(relation: RelationFacts, id: string, definite: boolean): void {
    this.relations.push(relation);
    this.ids.push(id);
    this.definite.push(definite);
  }

  get length(): number {
    return this.ids.length;
  }
}

/**
 * Ids of every object of `objectType` on which the subject has `relation`, sorted.
 *
 * Reverse expansion (as OpenFGA's list-objects): start from the tuples that name the subject,
 * follow the model backwards through the reverse index level by level (each level is one
 * dispatch, so a breadth-first walk finds every object at its smallest depth), and keep the facts
 * about the target relation. Facts that passed through an intersection or exclusion are only
 * candidates, confirmed by a check sharing one memo. Each fact is expanded once, cycles included.
 */
export async function listObjects(
  typesystem: TypeSystem,
  reader: TupleReader,
  objectType: string,
  relation: string,
  subject: Subject,
  options: CheckOptions,
): Promise<string[]> {
  const depthBound = Math.min(options.maxDepth, MAX_RECORDED_DEPTH);
  const maps = new FactMaps(packed(depthBound, true) + 1);
  try {
    return await walk(maps, depthBound, typesystem, reader, objectType, relation, subject, options);
  } finally {
    maps.close();
  }
}

/** The walk of listObjects, its facts in `maps`, depths counted up to `depthBound`. */
async function walk(
  maps: FactMaps,
  depthBound: number,
  ...[typesystem, reader, objectType, relation, subject, options]: Parameters<typeof listObjects>
): Promise<string[]> {
  const graph = ReverseGraph.of(typesystem);
  const relevant = graph.relevantTo(objectType, relation);
  // Facts by relation (type#relation), then by object id: the walk builds no key and no object per
  // fact (a large answer allocates little more than its own ids).
  const known = new Map<string, RelationFacts>();
  let level = new Frontier();
  let depth = 0;

  /** The facts of `type#relation` learnt so far, or undefined when that relation cannot lead to the target. */
  const factsOf = (type: string, factRelation: string): RelationFacts | undefined => {
    const key = relationKey(type, factRelation);
    if (!relevant.has(key)) return undefined;
    let facts = known.get(key);
    if (!facts) known.set(key, (facts = { type, relation: factRelation, byId: maps.open(key) }));
    return facts;
  };
  const stepsOf = (from: RelationFacts): Step[] =>
    (from.steps ??= graph.edgesFrom(from.type, from.relation).flatMap((edge) => {
      const into = edge.kind === 'computed' ? factsOf(from.type, edge.relation) : factsOf(edge.objectType, edge.relation);
      return into ? [{ edge, into }] : [];
    }));
  const learn = (facts: RelationFacts | undefined, id: string, definite: boolean, into: Frontier, factDepth: number): void => {
    if (!facts) return;
    const previous = facts.byId.get(id);
    // Expand each fact once, and once more if a candidate turns out definite; the walk goes level
    // by level, so the first depth recorded is the smallest.
    if (previous !== undefined && (isDefinite(previous) || !definite)) return;
    facts.byId.set(id, packed(Math.min(factDepth, depthBound), definite));
    // A relation no edge leaves (the target, usually) has nothing to expand: a large answer is not
    // copied into the frontier as well.
    if (stepsOf(facts).length > 0) into.push(facts, id, definite);
  };

  for (const seed of await seedFacts(graph, reader, subject)) learn(factsOf(seed.type, seed.relation), seed.id, seed.definite, level, 0);
  while (level.length > 0) {
    const next = new Frontier();
    // `level` grows while it is walked: computed usersets stay on the same object, at the same depth.
    for (let index = 0; index < level.length; index += 1) {
      const from = level.relations[index]!;
      const id = level.ids[index]!;
      const factDefinite = level.definite[index]!;
      for (const { edge, into } of stepsOf(from)) {
        const definite = factDefinite && edge.definite;
        if (edge.kind === 'computed') {
          learn(into, id, definite, level, depth);
          continue;
        }
        const ids = reader.readObjectIds(reverseQuery(from, id, edge));
        // Awaiting only real promises keeps the in-memory walk free of microtask hops.
        eachId(isPromise(ids) ? await ids : ids, (objectId) => learn(into, objectId, definite, next, depth + 1));
      }
    }
    level = next;
    depth += 1;
  }

  const targetFacts = known.get(relationKey(objectType, relation))?.byId;
  // Sized once for every fact (then cut to the answer): a large answer is not copied as it grows.
  const ids = new Array<string>(targetFacts?.size ?? 0);
  let found = 0;
  const candidates: string[] = [];
  targetFacts?.forEach((fact, id) => {
    if (!isDefinite(fact)) candidates.push(id);
    // Every path is that long, so a check of this object would fail the same way.
    else if (depthOf(fact) >= options.maxDepth) {
      throw new FgaError('MAX_DEPTH_EXCEEDED', `resolution exceeded the maximum depth of ${options.maxDepth} at ${objectType}:${id}`);
    } else ids[found++] = id;
  });
  const checker = new CheckResolver(typesystem, reader, subject, options);
  for (const id of candidates) {
    const outcome = checker.resolve(objectType, id, relation, 0);
    if ((isPromise(outcome) ? await outcome : outcome) === Outcome.allowed) ids[found++] = id;
  }
  ids.length = found;
  return ids.sort();
}

/**
 * Every id, through forEach when the reader answered a Set or an array (the in-memory index does):
 * an iterator would allocate a result object per id of a large answer.
 */
function eachId(ids: Iterable<string>, visit: (id: string) => void): void {
  if (ids instanceof Set || Array.isArray(ids)) (ids as ReadonlySet<string> | readonly string[]).forEach((id) => visit(id));
  else for (const id of ids) visit(id);
}

/** Facts read straight from tuples naming the subject (or its type's wildcard); a userset subject is a fact itself. */
async function seedFacts(graph: ReverseGraph, reader: TupleReader, subject: Subject): Promise<Fact[]> {
  if (subject.relation !== undefined) {
    return [{ type: subject.type, id: subject.id, relation: subject.relation, definite: true }];
  }
  const seeds: Fact[] = [];
  const lookups = [{ subjectId: WILDCARD_ID, edges: graph.directEdges(subject.type, true) }];
  if (subject.id !== WILDCARD_ID) {
    lookups.push({ subjectId: subject.id, edges: graph.directEdges(subject.type, false) });
  }
  for (const { subjectId, edges } of lookups) {
    for (const edge of edges) {
      const query = { objectType: edge.objectType, relation: edge.relation, subjectType: subject.type, subjectId };
      const ids = reader.readObjectIds(query);
      for (const id of isPromise(ids) ? await ids : ids) {
        seeds.push({ type: edge.objectType, id, relation: edge.relation, definite: edge.definite });
      }
    }
  }
  return seeds;
}

function reverseQuery(from: RelationFacts, id: string, edge: Exclude<ReverseEdge, { kind: 'computed' }>): ObjectIdsQuery {
  const subject = { subjectType: from.type, subjectId: id };
  return edge.kind === 'userset'
    ? { objectType: edge.objectType, relation: edge.relation, ...subject, subjectRelation: from.relation }
    : { objectType: edge.objectType, relation: edge.tupleset, ...subject };
}
