import { describe } from 'vitest';
import { webhookDeliverySuite } from './delivery-suite.ts';

describe('webhook delivery on the in-process bus', () => webhookDeliverySuite(() => ({})));
