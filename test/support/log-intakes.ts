import type { Answer, ReceivedRequest } from './https-receiver.ts';

const json = { 'content-type': 'application/json' };
const answer = (status: number, body: unknown): Answer => ({ status, body: JSON.stringify(body), headers: json });

function parsed(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

/**
 * The hosted log platform's HTTP log intake v2 (`POST /api/v2/logs`) as it answers: 202 `{}` for a
 * JSON array of entries, each with a string `message`, sent as application/json under a known
 * `DD-API-KEY`; 403 for a missing or unknown key, 400 for any other body.
 */
export function platformAIntake(request: ReceivedRequest, apiKeys: ReadonlySet<string>): Answer {
  if (!apiKeys.has(String(request.headers['dd-api-key']))) return answer(403, { errors: ['Forbidden'] });
  const entries = parsed(request.body);
  const wellFormed = String(request.headers['content-type']).startsWith('application/json') && Array.isArray(entries) && entries.length > 0
    && entries.every((entry) => typeof entry === 'object' && entry !== null && typeof (entry as { message?: unknown }).message === 'string');
  return wellFormed ? answer(202, {}) : answer(400, { errors: ['Bad Request'] });
}

/**
 * The HTTP event collector (`POST /services/collector/event`) as it answers: `{text, code}` bodies,
 * 200 Success for a JSON object with an `event` under `Authorization: Splunk <known token>`; 401
 * without a token, 403 for an unknown one, 400 for a body that is not JSON or has no event.
 */
export function platformBCollector(request: ReceivedRequest, tokens: ReadonlySet<string>): Answer {
  const authorization = /^Splunk (.+)$/.exec(String(request.headers.authorization ?? ''));
  if (!authorization) return answer(401, { text: 'Token is required', code: 2 });
  if (!tokens.has(authorization[1]!)) return answer(403, { text: 'Invalid token', code: 4 });
  const event = parsed(request.body);
  if (typeof event !== 'object' || event === null || Array.isArray(event)) return answer(400, { text: 'Invalid data format', code: 6 });
  if (!('event' in event)) return answer(400, { text: 'Event field is required', code: 12 });
  if (event.event === null || event.event === '') return answer(400, { text: 'Event field cannot be blank', code: 13 });
  return answer(200, { text: 'Success', code: 0 });
}
