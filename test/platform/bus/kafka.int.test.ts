import { openKafkaBus, whenKafkaReachable } from '../../support/kafka.ts';
import { eventBusContract } from './bus-contract.ts';

whenKafkaReachable(() => eventBusContract('Kafka', () => openKafkaBus('bus-contract-test')));
