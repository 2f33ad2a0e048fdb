import type { FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { bearerToken } from '../../../src/platform/http/authentication.ts';

/** The header's grammar as it always was: whatever the fast path takes must be what this takes. */
const grammar = (header: string | undefined): string | null => (header ? (/^Bearer\s+(\S+)\s*$/i.exec(header)?.[1] ?? null) : null);

const tokenOf = (header: string | undefined): string | null => {
  try {
    return bearerToken({ headers: { authorization: header } } as unknown as FastifyRequest);
  } catch (error) {
    expect(error).toMatchObject({ code: 'TOKEN_INVALID', message: 'A bearer access token is required' });
    return null;
  }
};

describe('bearerToken', () => {
  it('takes the token exactly as the header grammar does, for the usual and every unusual spelling', () => {
    const jwt = `${'a'.repeat(40)}.${'b-_'.repeat(100)}.${'c'.repeat(342)}`;
    const headers = [
      `Bearer ${jwt}`, `bearer ${jwt}`, `BEARER ${jwt}`, `Bearer  ${jwt}`, `Bearer\t${jwt}`, `Bearer ${jwt} `, `Bearer ${jwt}\n`,
      `Bearer ${jwt}\u00a0`, `Bearer \u00a0${jwt}`, 'Bearer a b', 'Bearer ', 'Bearer', 'Bearer é', 'Bearer a\u2028', 'Bearer !~',
      `Basic ${jwt}`, ` Bearer ${jwt}`, `Bearer${jwt}`, '', undefined,
    ];
    for (const header of headers) expect(tokenOf(header), JSON.stringify(header)).toBe(grammar(header));
    expect(tokenOf(`Bearer ${jwt}`)).toBe(jwt);
  });
});
