// A member of a Kafka consumer group in a process of its own (kafka-killed-member.int.test.ts):
// it joins GROUP on TOPIC, prints "joined", then prints "handling <ids>" for its first batch and
// holds it forever, never committing it, until the test kills the process.
import pino from 'pino';
import { KafkaEventBus } from '../../../src/platform/bus/kafka.ts';

const bus = await KafkaEventBus.connect({ brokers: process.env.KAFKA_BROKERS!.split(','), clientId: 'killed-member', logger: pino({ level: 'silent' }) });
await bus.subscribe({
  groupId: process.env.GROUP!,
  topic: process.env.TOPIC!,
  fromBeginning: false,
  handler: async (messages) => {
    console.log(`handling ${messages.map((message) => message.value.id).join(',')}`);
    await new Promise(() => undefined);
  },
});
console.log('joined');
