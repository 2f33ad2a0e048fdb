import { describe } from 'vitest';
import { newId } from '../../../src/platform/ids.ts';
import { kafkaBrokers, whenKafkaReachable } from '../../support/kafka.ts';
import { killedServiceSuite } from './killed-service-suite.ts';

whenKafkaReachable(() => {
  // A topic of this file's own: the consumer groups start on it with no history.
  const topic = `test.killed-service.${newId()}`;
  describe('webhook retries across a killed service, on a real Kafka broker', () =>
    // The next start joins the groups once the broker has dropped the killed member (its session, 30 s).
    killedServiceSuite(() => ({ KAFKA_BROKERS: kafkaBrokers.join(','), KAFKA_TOPIC: topic, KAFKA_TOPIC_PARTITIONS: '3' }), 180_000));
});
