import { describe } from 'vitest';
import { newId } from '../../../src/platform/ids.ts';
import { kafkaBrokers, whenKafkaReachable } from '../../support/kafka.ts';
import { logStreamSuite } from './log-streams-suite.ts';

whenKafkaReachable(() => {
  // A topic of this file's own: the consumer group starts on it with no history.
  const topic = `test.log-streams.${newId()}`;
  describe('log streams over HTTP on a real Kafka broker', () =>
    logStreamSuite(() => ({ KAFKA_BROKERS: kafkaBrokers.join(','), KAFKA_TOPIC: topic, KAFKA_TOPIC_PARTITIONS: '3' })));
});
