import type { Logger } from 'pino';
import { InProcessEventBus } from './in-process.ts';
import type { EventBus } from './port.ts';

/** Kafka when brokers are named (host:port each), otherwise the in-process bus. */
export async function openEventBus(settings: { brokers: string[] }, logger: Logger): Promise<EventBus> {
  if (settings.brokers.length === 0) return new InProcessEventBus(logger);
  // Loaded only when used, like the KurrentDB store: the embedded setup never loads kafkajs.
  const { KafkaEventBus } = await import('./kafka.ts');
  return KafkaEventBus.connect({ brokers: settings.brokers, clientId: 'iam-service', logger: logger.child({ component: 'kafka' }) });
}
