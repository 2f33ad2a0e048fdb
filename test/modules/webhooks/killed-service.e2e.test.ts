import { describe } from 'vitest';
import { killedServiceSuite } from './killed-service-suite.ts';

describe('webhook retries across a killed service, on the in-process bus', () => killedServiceSuite(() => ({})));
