/**
 * Values that are ready now or later. The engine runs over readers that answer synchronously
 * (the in-memory index) or asynchronously (SQL) with one code path: it stays synchronous until a
 * reader returns a promise, so the in-memory path pays no promise or microtask per step (about
 * twice the checks per second of async/await everywhere).
 */
export type MaybePromise<T> = T | Promise<T>;

export function isPromise<T>(value: MaybePromise<T>): value is Promise<T> {
  return value instanceof Promise;
}

/**
 * `value.then(next)` that stays synchronous for a ready value. (Not named `then`: a module that
 * exports `then` is a thenable, which breaks dynamic imports of it.)
 */
export function andThen<T, R>(value: MaybePromise<T>, next: (value: T) => MaybePromise<R>): MaybePromise<R> {
  return isPromise(value) ? value.then(next) : next(value);
}

/** Folds results one by one until the reducer decides; see `fold`. */
export interface Reducer<R, A> {
  /** Takes one result; returns the answer to stop early, or undefined to go on. */
  accept(result: R): A | undefined;
  /** Takes one failed evaluation. */
  fail(error: unknown): void;
  /** The answer once every item was seen (may throw a remembered failure). */
  finish(): A;
}

/**
 * Evaluates items in order, feeding each result to the reducer, without concurrency (the check
 * engine relies on one evaluation path at a time for cycle detection). Synchronous while the
 * evaluations are; continues asynchronously from the first promise.
 */
export function fold<T, R, A>(
  items: Iterable<T>,
  evaluate: (item: T) => MaybePromise<R>,
  reducer: Reducer<R, A>,
): MaybePromise<A> {
  // Arrays (rewrite children, a check's few candidates) are walked by index: no iterator and no
  // step object per item on the hot path.
  if (Array.isArray(items)) return foldArray(items as T[], evaluate, reducer);
  const iterator = items[Symbol.iterator]();
  for (let step = iterator.next(); !step.done; step = iterator.next()) {
    const result = attempt(evaluate, step.value, reducer);
    if (isPromise(result)) return foldAsync(result, iterator, evaluate, reducer);
    if (result !== FAILED) {
      const answer = reducer.accept(result);
      if (answer !== undefined) return answer;
    }
  }
  return reducer.finish();
}

/** `fold` over `items` from index `from` on (the reducer has seen the ones before). */
export function foldArray<T, R, A>(items: readonly T[], evaluate: (item: T) => MaybePromise<R>, reducer: Reducer<R, A>, from = 0): MaybePromise<A> {
  for (let index = from; index < items.length; index += 1) {
    const result = attempt(evaluate, items[index]!, reducer);
    if (isPromise(result)) return foldAfter(result, items, index + 1, evaluate, reducer);
    if (result !== FAILED) {
      const answer = reducer.accept(result);
      if (answer !== undefined) return answer;
    }
  }
  return reducer.finish();
}

/** `fold` going on asynchronously: `pending` is the result of the item before `items[from]`. */
export function foldAfter<T, R, A>(pending: Promise<R>, items: readonly T[], from: number, evaluate: (item: T) => MaybePromise<R>, reducer: Reducer<R, A>): Promise<A> {
  return foldAsync(pending, items.slice(from).values(), evaluate, reducer);
}

const FAILED: unique symbol = Symbol('failed');

/** The item's result, or FAILED once the reducer has taken the error it threw. */
function attempt<T, R, A>(evaluate: (item: T) => MaybePromise<R>, item: T, reducer: Reducer<R, A>): MaybePromise<R> | typeof FAILED {
  try {
    return evaluate(item);
  } catch (error) {
    reducer.fail(error);
    return FAILED;
  }
}

async function foldAsync<T, R, A>(
  pending: Promise<R>,
  iterator: Iterator<T>,
  evaluate: (item: T) => MaybePromise<R>,
  reducer: Reducer<R, A>,
): Promise<A> {
  let current = (): MaybePromise<R> => pending;
  for (;;) {
    try {
      const answer = reducer.accept(await current());
      if (answer !== undefined) return answer;
    } catch (error) {
      reducer.fail(error);
    }
    const step = iterator.next();
    if (step.done) return reducer.finish();
    const item = step.value;
    current = () => evaluate(item);
  }
}
