import { describe } from 'vitest';
import { newId } from '../../../src/platform/ids.ts';
import { kafkaBrokers, whenKafkaReachable } from '../../support/kafka.ts';
import { webhookDeliverySuite } from './delivery-suite.ts';

whenKafkaReachable(() => {
  // A topic of this file's own: the consumer group starts on it with no history.
  const topic = `test.webhooks.${newId()}`;
  describe('webhook delivery on a real Kafka broker', () =>
    webhookDeliverySuite(() => ({ KAFKA_BROKERS: kafkaBrokers.join(','), KAFKA_TOPIC: topic, KAFKA_TOPIC_PARTITIONS: '3' })));
});
