import pino from 'pino';
import { InProcessEventBus } from '../../../src/platform/bus/in-process.ts';
import { eventBusContract } from './bus-contract.ts';

eventBusContract('in-process', async () => new InProcessEventBus(pino({ level: process.env.LOG_LEVEL ?? 'silent' })));
