/**
 * Tokens of the OpenFGA DSL. Keywords are words; the parser decides by position whether a word
 * is a keyword or a name. Whitespace is dropped, line breaks are kept (the DSL is line oriented).
 * Any other character becomes a one-character symbol: the lexer never fails, so the parser can
 * recognise an unsupported block (a `condition` with its CEL body) before reporting its syntax.
 */
export type TokenKind = 'word' | 'symbol' | 'newline' | 'eof';

export interface Token {
  kind: TokenKind;
  text: string;
  /** 1-based line number, for error messages. */
  line: number;
}

const WORD_CHAR = /[A-Za-z0-9_.\-]/;

/** Splits DSL text into tokens in one linear pass. A `#` at a line start or after whitespace starts a comment. */
export function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let line = 1;
  let index = 0;
  let afterWhitespace = true;
  while (index < text.length) {
    const char = text.charAt(index);
    if (char === '\n') {
      tokens.push({ kind: 'newline', text: '\n', line });
      line += 1;
      index += 1;
      afterWhitespace = true;
    } else if (char === ' ' || char === '\t' || char === '\r' || char === '\f') {
      index += 1;
      afterWhitespace = true;
    } else if (char === '#' && afterWhitespace) {
      while (index < text.length && text.charAt(index) !== '\n') index += 1;
    } else if (WORD_CHAR.test(char)) {
      const start = index;
      while (index < text.length && WORD_CHAR.test(text.charAt(index))) index += 1;
      tokens.push({ kind: 'word', text: text.slice(start, index), line });
      afterWhitespace = false;
    } else {
      tokens.push({ kind: 'symbol', text: char, line });
      index += 1;
      afterWhitespace = false;
    }
  }
  tokens.push({ kind: 'eof', text: '', line });
  return tokens;
}
