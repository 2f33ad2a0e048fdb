import type { MaybePromise, Reducer } from './maybe-async.ts';
import { fold, foldAfter, foldArray, isPromise } from './maybe-async.ts';

/**
 * The answer to one sub-check. As in OpenFGA, a branch cut by cycle detection is a "no" that is
 * remembered as such: an exclusion whose subtract hit a cycle, or an intersection with such a
 * child, answers no (it cannot prove the subject is not excluded), and such answers depend on the
 * evaluation path, so they are never memoized.
 */
export const Outcome = { denied: 0, allowed: 1, deniedByCycle: 2 } as const;
export type Outcome = (typeof Outcome)[keyof typeof Outcome];

type Evaluate<T> = (item: T) => MaybePromise<Outcome>;

/** Remembers the first failure; OpenFGA reports an error only when no other operand decides. */
abstract class OutcomeReducer implements Reducer<Outcome, Outcome> {
  protected failure: { error: unknown } | undefined;

  abstract accept(outcome: Outcome): Outcome | undefined;

  fail(error: unknown): void {
    this.failure ??= { error };
  }

  finish(): Outcome {
    if (this.failure) throw this.failure.error;
    return this.settled();
  }

  protected abstract settled(): Outcome;
}

class UnionReducer extends OutcomeReducer {
  /** `sawCycle`: an operand already seen answered deniedByCycle. */
  constructor(private sawCycle = false) {
    super();
  }

  accept(outcome: Outcome): Outcome | undefined {
    if (outcome === Outcome.allowed) return outcome;
    if (outcome === Outcome.deniedByCycle) this.sawCycle = true;
    return undefined;
  }

  protected settled(): Outcome {
    return this.sawCycle ? Outcome.deniedByCycle : Outcome.denied;
  }
}

class IntersectionReducer extends OutcomeReducer {
  accept(outcome: Outcome): Outcome | undefined {
    return outcome === Outcome.allowed ? undefined : outcome;
  }

  protected settled(): Outcome {
    return Outcome.allowed;
  }
}

/** Sees base then subtract: either side can decide "no" alone. */
class ExclusionReducer extends OutcomeReducer {
  private seen = 0;

  accept(outcome: Outcome): Outcome | undefined {
    const isBase = this.seen === 0;
    this.seen += 1;
    if (isBase) return outcome === Outcome.allowed ? undefined : outcome;
    if (outcome === Outcome.deniedByCycle) return outcome;
    return outcome === Outcome.allowed ? Outcome.denied : undefined;
  }

  override fail(error: unknown): void {
    this.seen += 1;
    super.fail(error);
  }

  protected settled(): Outcome {
    return Outcome.allowed;
  }
}

/**
 * Union: the first "allowed" wins. An error counts only if nothing allows, so a depth error in one
 * branch does not hide a grant elsewhere.
 */
export function anyOf<T>(items: Iterable<T>, evaluate: Evaluate<T>): MaybePromise<Outcome> {
  if (!Array.isArray(items)) return fold(items, evaluate, new UnionReducer());
  // An array (rewrite children, direct sources, a lone id) answered now, the in-memory check's
  // every union: no reducer until an operand fails or answers later, then the reducer goes on.
  let sawCycle = false;
  for (let index = 0; index < items.length; index += 1) {
    let outcome: MaybePromise<Outcome>;
    try {
      outcome = evaluate(items[index] as T);
    } catch (error) {
      const reducer = new UnionReducer(sawCycle);
      reducer.fail(error);
      return foldArray(items as T[], evaluate, reducer, index + 1);
    }
    if (outcome === Outcome.allowed) return outcome;
    if (outcome === Outcome.deniedByCycle) sawCycle = true;
    else if (isPromise(outcome)) return foldAfter(outcome, items as T[], index + 1, evaluate, new UnionReducer(sawCycle));
  }
  return sawCycle ? Outcome.deniedByCycle : Outcome.denied;
}

/** Intersection: the first operand that does not allow decides; errors only when every other operand allows. */
export function allOf<T>(items: Iterable<T>, evaluate: Evaluate<T>): MaybePromise<Outcome> {
  return fold(items, evaluate, new IntersectionReducer());
}

/** Exclusion: allowed when base allows and subtract denies without a cycle. */
export function butNot(
  base: () => MaybePromise<Outcome>,
  subtract: () => MaybePromise<Outcome>,
): MaybePromise<Outcome> {
  return fold([base, subtract], (operand) => operand(), new ExclusionReducer());
}
