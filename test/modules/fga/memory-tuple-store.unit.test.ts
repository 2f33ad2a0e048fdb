import { describe, expect, it } from 'vitest';
import { MemoryTupleStore } from '../../../src/modules/fga/engine/memory-tuple-store.ts';
import { parseTuple, tupleToString } from '../../../src/modules/fga/tuple.ts';

const tuples = [
  'document:1#viewer@user:anne',
  'document:1#viewer@user:*',
  'document:1#viewer@group:eng#member',
  'document:2#viewer@user:anne',
  'document:2#editor@user:anne',
].map(parseTuple);

const documentViewersOf = (store: MemoryTupleStore, subjectId: string) =>
  [...store.readObjectIds({ objectType: 'document', relation: 'viewer', subjectType: 'user', subjectId })].sort();

describe('MemoryTupleStore', () => {
  it('adds each tuple once and counts them', () => {
    const store = MemoryTupleStore.of(tuples);
    expect(store.size).toBe(5);
    expect(store.add(parseTuple('document:1#viewer@user:anne'))).toBe(false);
    expect(store.size).toBe(5);
    expect([...store.tuples()].map(tupleToString).sort()).toEqual(tuples.map(tupleToString).sort());
  });

  it('reads subjects of one kind on an object#relation, the wildcard among plain ids', () => {
    const store = MemoryTupleStore.of(tuples);
    const on = { objectType: 'document', objectId: '1', relation: 'viewer' };
    expect([...store.readSubjectIds({ ...on, subjectType: 'user' })].sort()).toEqual(['*', 'anne']);
    expect([...store.readSubjectIds({ ...on, subjectType: 'group', subjectRelation: 'member' })]).toEqual(['eng']);
    expect([...store.readSubjectIds({ ...on, subjectType: 'group' })]).toEqual([]);
    expect([...store.readSubjectIds({ ...on, objectId: '3', subjectType: 'user' })]).toEqual([]);
  });

  it('reads objects related to exactly one subject', () => {
    const store = MemoryTupleStore.of(tuples);
    expect(documentViewersOf(store, 'anne')).toEqual(['1', '2']);
    expect(documentViewersOf(store, '*')).toEqual(['1']);
    const members = { objectType: 'document', relation: 'viewer', subjectType: 'group', subjectId: 'eng', subjectRelation: 'member' };
    expect([...store.readObjectIds(members)]).toEqual(['1']);
    expect([...store.readObjectIds({ ...members, subjectRelation: 'owner' })]).toEqual([]);
  });

  it('knows whether an exact tuple is stored', () => {
    const store = MemoryTupleStore.of(tuples);
    expect(store.hasTuple(parseTuple('document:1#viewer@group:eng#member'))).toBe(true);
    expect(store.hasTuple(parseTuple('document:1#viewer@group:eng'))).toBe(false);
    expect(store.hasTuple(parseTuple('document:2#viewer@user:*'))).toBe(false);
  });

  it('removes tuples from both directions', () => {
    const store = MemoryTupleStore.of(tuples);
    expect(store.remove(parseTuple('document:1#viewer@user:anne'))).toBe(true);
    expect(store.remove(parseTuple('document:1#viewer@user:anne'))).toBe(false);
    expect(store.size).toBe(4);
    expect(store.hasTuple(parseTuple('document:1#viewer@user:anne'))).toBe(false);
    expect(documentViewersOf(store, 'anne')).toEqual(['2']);
    const query = { objectType: 'document', objectId: '1', relation: 'viewer', subjectType: 'user' };
    expect([...store.readSubjectIds(query)]).toEqual(['*']);
  });

  it('keeps a lone id and a set of ids alike through adds and removes', () => {
    const store = new MemoryTupleStore();
    const on = { objectType: 'document', objectId: '9', relation: 'viewer', subjectType: 'user' };
    const viewers = () => [...store.readSubjectIds(on)].sort();
    expect(store.add(parseTuple('document:9#viewer@user:ann'))).toBe(true);
    expect(store.remove(parseTuple('document:9#viewer@user:bob'))).toBe(false);
    expect(store.add(parseTuple('document:9#viewer@user:bob'))).toBe(true);
    expect(viewers()).toEqual(['ann', 'bob']);
    expect(store.remove(parseTuple('document:9#viewer@user:ann'))).toBe(true);
    expect(viewers()).toEqual(['bob']);
    expect(store.hasTuple(parseTuple('document:9#viewer@user:bob'))).toBe(true);
    expect(store.add(parseTuple('document:9#viewer@user:bob'))).toBe(false);
    expect(store.remove(parseTuple('document:9#viewer@user:bob'))).toBe(true);
    expect([viewers(), store.size, [...store.tuples()]]).toEqual([[], 0, []]);
  });
});
