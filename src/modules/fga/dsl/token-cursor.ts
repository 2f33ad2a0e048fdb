import { DslUnsupportedError, FgaError } from '../errors.ts';
import { NAME_PATTERN } from '../schema.ts';
import type { Token } from './lexer.ts';


// The operator words would make relation expressions ambiguous, so they name nothing; other
// keywords are fine as names (OpenFGA's own tests define `type module`). `__proto__` is refused
// because names become keys of the schema's plain JSON objects.
const RESERVED_NAMES = new Set(['and', 'or', 'but', 'from', '__proto__']);

/** A read position over the token list, with the error helpers every parse step shares. */
export class TokenCursor {
  private index = 0;

  constructor(private readonly tokens: readonly Token[]) {}

  peek(offset = 0): Token {
    // The last token is always eof, so reading past the end keeps answering eof.
    return this.tokens[Math.min(this.index + offset, this.tokens.length - 1)] as Token;
  }

  next(): Token {
    const token = this.peek();
    if (token.kind !== 'eof') this.index += 1;
    return token;
  }

  atWord(text: string): boolean {
    const token = this.peek();
    return token.kind === 'word' && token.text === text;
  }

  atSymbol(text: string): boolean {
    const token = this.peek();
    return token.kind === 'symbol' && token.text === text;
  }

  atEnd(): boolean {
    return this.peek().kind === 'eof';
  }

  skipNewlines(): void {
    while (this.peek().kind === 'newline') this.index += 1;
  }

  expectSymbol(text: string, context: string): Token {
    if (!this.atSymbol(text)) this.fail(`expected '${text}' ${context}`);
    return this.next();
  }

  /** Reads a type or relation name. */
  expectName(what: string): string {
    const token = this.peek();
    if (token.kind !== 'word' || !NAME_PATTERN.test(token.text) || RESERVED_NAMES.has(token.text)) {
      this.fail(`expected ${what}`);
    }
    return this.next().text;
  }

  /** A statement ends at a line break or at the end of the text. */
  expectEndOfLine(context: string): void {
    const token = this.peek();
    if (token.kind === 'newline') this.next();
    else if (token.kind !== 'eof') this.fail(`unexpected ${describe(token)} ${context}`);
  }

  /** Throws DSL_PARSE_ERROR at the current token's line, saying what was found there. */
  fail(message: string): never {
    const token = this.peek();
    const found = message.startsWith('unexpected') ? '' : `, found ${describe(token)}`;
    throw new FgaError('DSL_PARSE_ERROR', `line ${token.line}: ${message}${found}`);
  }

  unsupported(feature: string): never {
    throw new DslUnsupportedError(`line ${this.peek().line}: ${feature} are not supported`);
  }
}

function describe(token: Token): string {
  if (token.kind === 'eof') return 'end of input';
  if (token.kind === 'newline') return 'end of line';
  return `'${token.text}'`;
}
