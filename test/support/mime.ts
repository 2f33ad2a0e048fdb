/**
 * Just enough RFC 2045-2047 decoding for tests to read what nodemailer sent: unfolded headers with
 * encoded words, multipart bodies, quoted-printable and base64 transfer encodings. UTF-8 only.
 */
export interface ParsedMail {
  /** Lower-cased names; the first occurrence of each. */
  headers: Map<string, string>;
  subject: string;
  text: string | null;
  html: string | null;
}

interface Part {
  headers: Map<string, string>;
  body: string;
}

const hexBytes = (text: string) =>
  Buffer.from(text.replace(/=([0-9A-Fa-f]{2})|[^=]/g, (match, hex: string | undefined) => (hex ? String.fromCharCode(parseInt(hex, 16)) : match)), 'latin1');

/** `=?charset?Q|B?...?=` words; whitespace between two encoded words is not part of the text. */
export function decodeWords(value: string): string {
  return value
    .replace(/(\?=)\s+(=\?)/g, '$1$2')
    .replace(/=\?[^?]+\?([QqBb])\?([^?]*)\?=/g, (_match, encoding: string, data: string) =>
      encoding.toUpperCase() === 'B' ? Buffer.from(data, 'base64').toString('utf8') : hexBytes(data.replace(/_/g, ' ')).toString('utf8'),
    );
}

function splitPart(raw: string): Part {
  const separator = raw.indexOf('\r\n\r\n');
  const head = separator < 0 ? raw : raw.slice(0, separator);
  const headers = new Map<string, string>();
  for (const line of head.replace(/\r\n[ \t]+/g, ' ').split('\r\n')) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim().toLowerCase();
    if (colon > 0 && !headers.has(name)) headers.set(name, decodeWords(line.slice(colon + 1).trim()));
  }
  return { headers, body: separator < 0 ? '' : raw.slice(separator + 4) };
}

function decodeBody({ headers, body }: Part): string {
  const encoding = headers.get('content-transfer-encoding')?.toLowerCase();
  const bytes =
    encoding === 'quoted-printable' ? hexBytes(body.replace(/=\r\n/g, '')) : encoding === 'base64' ? Buffer.from(body, 'base64') : Buffer.from(body, 'utf8');
  return bytes.toString('utf8').replace(/\r\n/g, '\n');
}

/** The leaf parts of a (possibly nested) multipart message. */
function leaves(part: Part): Part[] {
  const type = part.headers.get('content-type') ?? 'text/plain';
  const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1];
  if (!type.toLowerCase().startsWith('multipart/') || !boundary) return [part];
  const sections = part.body.split(`--${boundary}`).slice(1, -1); // drop the preamble and the epilogue
  return sections.flatMap((section) => leaves(splitPart(section.replace(/^\r\n/, '').replace(/\r\n$/, ''))));
}

export function parseMail(raw: string): ParsedMail {
  // The last line break ends the SMTP data (before the terminating dot), not the text.
  const message = splitPart(raw.replace(/\r?\n/g, '\r\n').replace(/\r\n$/, ''));
  const bodyOf = (mimeType: string) => {
    const part = leaves(message).find((leaf) => (leaf.headers.get('content-type') ?? 'text/plain').toLowerCase().startsWith(mimeType));
    return part ? decodeBody(part) : null;
  };
  return { headers: message.headers, subject: message.headers.get('subject') ?? '', text: bodyOf('text/plain'), html: bodyOf('text/html') };
}
