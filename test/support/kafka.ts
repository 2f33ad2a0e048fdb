import { execFile } from 'node:child_process';
import { connect } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import pino from 'pino';
import { describe, it } from 'vitest';
import { KafkaEventBus } from '../../src/platform/bus/kafka.ts';

// A real broker: scripts/kafka/start.sh starts one on 127.0.0.1:9092.
export const kafkaBrokers = (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(',').map((broker) => broker.trim());

/** Why the broker cannot be reached, or undefined when it accepts connections. */
function unreachableReason(broker: string): Promise<string | undefined> {
  const [host = '', port = ''] = broker.split(/:(?=\d+$)/);
  return new Promise((resolve) => {
    const socket = connect({ host, port: Number(port), timeout: 2000 });
    const fail = (why: string) => {
      socket.destroy();
      resolve(`no Kafka broker at ${broker} (${why}); run scripts/kafka/start.sh or set KAFKA_BROKERS`);
    };
    socket.once('connect', () => {
      socket.end();
      resolve(undefined);
    });
    socket.once('timeout', () => fail('timeout'));
    socket.once('error', (error) => fail(error.message));
  });
}

const kafkaUnavailable = await unreachableReason(kafkaBrokers[0]!);
/** Whether the broker answered when the test file loaded. */
export const kafkaReachable = kafkaUnavailable === undefined;

/**
 * Registers Kafka tests when the broker answers. Without one they fail under CI=true (CI must run
 * them, never skip them quietly) and are otherwise listed as skipped, by name, under the reason.
 */
export function whenKafkaReachable(register: () => void): void {
  if (!kafkaUnavailable) {
    register();
  } else if (process.env.CI === 'true') {
    it('reaches the Kafka broker (CI=true)', () => {
      throw new Error(kafkaUnavailable);
    });
  } else {
    describe.skip(`skipped: ${kafkaUnavailable}`, register);
  }
}

export function openKafkaBus(clientId: string, brokers = kafkaBrokers): Promise<KafkaEventBus> {
  return KafkaEventBus.connect({ brokers, clientId, logger: pino({ level: process.env.LOG_LEVEL ?? 'silent' }) });
}

const run = promisify(execFile);
const KAFKA_SCRIPTS = path.resolve('scripts/kafka');

/**
 * A broker of the test's own (scripts/kafka on another port and data folder), for tests that stop
 * and restart it while other test files keep using the shared one. Its port is the shared broker's
 * plus `offset`, so that suites run beside each other against brokers of their own never share it.
 */
export function dedicatedBroker(offset: number) {
  const port = Number(kafkaBrokers[0]!.split(':').at(-1)) + offset;
  const env = { ...process.env, KAFKA_PORT: String(port), KAFKA_DATA_DIR: path.resolve(`.data/kafka-${port}`) };
  return {
    brokers: [`127.0.0.1:${port}`],
    start: () => run('bash', [path.join(KAFKA_SCRIPTS, 'start.sh')], { env }),
    stop: () => run('bash', [path.join(KAFKA_SCRIPTS, 'stop.sh')], { env }),
  };
}
