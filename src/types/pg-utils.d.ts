/** pg's own value encoding (what a query's bind applies to each value), not in @types/pg. */
declare module 'pg/lib/utils.js' {
  const utils: { prepareValue(value: unknown): unknown };
  export default utils;
}
