import { describe, expect, it } from 'vitest';
import type { MaybePromise } from '../../../src/modules/fga/engine/maybe-async.ts';
import { Outcome, allOf, anyOf, butNot } from '../../../src/modules/fga/engine/outcome.ts';

const { allowed, denied, deniedByCycle } = Outcome;
type Operand = Outcome | 'error';

/** Each operand evaluated synchronously or through a promise; 'error' throws (or rejects). */
function evaluator(async: boolean, evaluated: Operand[]) {
  return (operand: Operand): MaybePromise<Outcome> => {
    evaluated.push(operand);
    if (operand === 'error') {
      if (async) return Promise.reject(new Error('boom'));
      throw new Error('boom');
    }
    return async ? Promise.resolve(operand) : operand;
  };
}

async function answer(run: () => MaybePromise<Outcome>): Promise<Outcome | 'error'> {
  try {
    return await run();
  } catch {
    return 'error';
  }
}

describe.each([false, true])('set operations (asynchronous operands: %s)', (async) => {
  it.each<[Operand[], Outcome | 'error', number]>([
    [[denied, allowed, 'error'], allowed, 2],
    [['error', allowed], allowed, 2],
    [['error', denied], 'error', 2],
    [[denied, deniedByCycle], deniedByCycle, 2],
    [[denied, denied], denied, 2],
    [[], denied, 0],
  ])('union of %j is %s after %i evaluations', async (operands, expected, evaluations) => {
    const evaluated: Operand[] = [];
    expect(await answer(() => anyOf(operands, evaluator(async, evaluated)))).toBe(expected);
    expect(evaluated).toHaveLength(evaluations);
  });

  it.each<[Operand[], Outcome | 'error']>([
    [[allowed, allowed], allowed],
    [[allowed, denied, 'error'], denied],
    [['error', denied], denied],
    [[allowed, deniedByCycle, denied], deniedByCycle],
    [['error', allowed], 'error'],
  ])('intersection of %j is %s', async (operands, expected) => {
    expect(await answer(() => allOf(operands, evaluator(async, [])))).toBe(expected);
  });

  it.each<[Operand, Operand, Outcome | 'error']>([
    [allowed, denied, allowed],
    [allowed, allowed, denied],
    [denied, 'error', denied],
    [deniedByCycle, denied, deniedByCycle],
    [allowed, deniedByCycle, deniedByCycle],
    ['error', allowed, denied],
    ['error', denied, 'error'],
    [allowed, 'error', 'error'],
  ])('%s but not %s is %s', async (base, subtract, expected) => {
    const evaluate = evaluator(async, []);
    expect(await answer(() => butNot(() => evaluate(base), () => evaluate(subtract)))).toBe(expected);
  });
});
