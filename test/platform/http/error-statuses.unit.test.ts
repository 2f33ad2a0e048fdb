import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { errorStatuses, moduleErrorStatuses } from '../../../src/error-statuses.ts';
import { DomainError } from '../../../src/platform/errors.ts';
import { composeErrorStatuses, toHttpFailure, wireOf } from '../../../src/platform/http/error-statuses.ts';

const sourceFiles = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );

/** Server-side conditions, never a client's fault: an internal error, a wait that ran out, a programming error refused at append. */
const INTENDED_5XX = new Set(['INTERNAL_ERROR', 'CONSISTENCY_TIMEOUT', 'REQUEST_TIMEOUT', 'SERVICE_UNAVAILABLE', 'EVENT_SCHEMA_VIOLATION']);

describe('domain error codes at the HTTP edge', () => {
  it('maps every code a module raises, each to a client error or an intended 5xx', () => {
    const raised = new Set<string>();
    for (const file of sourceFiles('src')) {
      // Every raiser is a module's typed `xxxError('CODE', ...)` (domainErrors): collect the codes.
      for (const match of readFileSync(file, 'utf8').matchAll(/\b\w+Error\(\s*'([A-Za-z_]+)',/g)) raised.add(match[1]!);
    }
    expect(raised.size).toBeGreaterThan(30);
    const unmapped = [...raised].filter((code) => !Object.hasOwn(errorStatuses, code));
    expect(unmapped).toEqual([]);
    for (const [module, table] of Object.entries(moduleErrorStatuses)) {
      for (const code of Object.keys(table)) expect([module, code, wireOf(errorStatuses, code).status < 500 || INTENDED_5XX.has(code)]).toEqual([module, code, true]);
    }
  });

  it('constructs DomainError only through the typed raisers (and the FGA core translation)', () => {
    const direct = sourceFiles('src').filter((file) => /new DomainError\(/.test(readFileSync(file, 'utf8')));
    expect(direct.sort()).toEqual([join('src', 'modules', 'fga', 'app-errors.ts'), join('src', 'platform', 'errors.ts')]);
  });

  it('answers an unmapped code as a 500 without its message', () => {
    expect(toHttpFailure(errorStatuses, new DomainError('NOT_A_CODE', 'secret detail'))).toEqual({ status: 500, code: 'INTERNAL_ERROR', message: 'Internal server error' });
  });

  it('renames a code whose wire name differs and turns retry-after into a header', () => {
    expect(toHttpFailure(errorStatuses, new DomainError('LINK_EXPIRED', 'expired'))).toMatchObject({ status: 400, code: 'TOKEN_EXPIRED' });
    expect(toHttpFailure(errorStatuses, new DomainError('ACCOUNT_LOCKED', 'locked', undefined, 60))).toMatchObject({ status: 423, headers: { 'retry-after': '60' } });
  });

  it('refuses one code mapped to two statuses', () => {
    expect(() => composeErrorStatuses({ X: 400 }, { X: 409 })).toThrow('X');
    expect(composeErrorStatuses({ X: 400 }, { X: 400 })).toEqual({ X: 400 });
  });
});
