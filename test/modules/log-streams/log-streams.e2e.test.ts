import { describe } from 'vitest';
import { logStreamSuite } from './log-streams-suite.ts';

describe('log streams over HTTP on the in-process bus', () => logStreamSuite(() => ({})));
