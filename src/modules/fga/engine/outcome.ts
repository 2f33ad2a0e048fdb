import type { MaybePromise, Reducer } from './maybe-async.ts';
import { fold } from './maybe-async.ts';

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
  private sawCycle = false;

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
  return fold(items, evaluate, new UnionReducer());
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
