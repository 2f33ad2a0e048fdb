import { describe, expect, it } from 'vitest';
import { FactMaps } from '../../../src/modules/fga/engine/fact-maps.ts';

const entries = (maps: FactMaps, relation: string) => {
  const map = maps.open(relation);
  const all = () => {
    const seen: [string, number][] = [];
    map.forEach((value, id) => seen.push([id, value]));
    return seen;
  };
  return { map, all };
};

describe('FactMaps', () => {
  it('shows a walk none of the facts an earlier walk set in a map it got back', () => {
    const first = new FactMaps(8);
    const earlier = first.open('document#viewer');
    for (const id of ['d1', 'd2', 'd3']) earlier.set(id, 7);
    first.close();

    const second = new FactMaps(8);
    const { map, all } = entries(second, 'document#viewer');
    expect(map.get('d1')).toBeUndefined();
    expect(map.size).toBe(0);
    map.set('d2', 2);
    map.set('d9', 0);
    map.set('d2', 3);
    expect(map.get('d2')).toBe(3);
    expect(map.size).toBe(2);
    expect(all().sort()).toEqual([['d2', 3], ['d9', 0]]);
    second.close();
  });

  it('keeps walks that run at once apart', () => {
    const one = new FactMaps(4);
    const other = new FactMaps(4);
    const a = one.open('folder#viewer');
    const b = other.open('folder#viewer');
    a.set('f1', 1);
    expect(b.get('f1')).toBeUndefined();
    b.set('f1', 2);
    expect(a.get('f1')).toBe(1);
    one.close();
    other.close();
  });

  it("refuses values outside the walk's span", () => {
    const maps = new FactMaps(4);
    const map = maps.open('group#member');
    expect(() => map.set('g1', 4)).toThrow(RangeError);
    expect(() => map.set('g1', -1)).toThrow(RangeError);
    maps.close();
    expect(() => new FactMaps(0)).toThrow(RangeError);
    expect(() => new FactMaps(2 ** 30)).toThrow(RangeError);
  });
});
