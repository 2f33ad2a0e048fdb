import { logLevel, type logCreator } from 'kafkajs';
import type { Logger } from 'pino';

/** kafkajs only builds entries at or above its own level: derive it from the pino level. */
export function kafkaLogLevelFor(logger: Logger): logLevel {
  if (logger.isLevelEnabled('debug')) return logLevel.DEBUG;
  if (logger.isLevelEnabled('info')) return logLevel.INFO;
  if (logger.isLevelEnabled('warn')) return logLevel.WARN;
  if (logger.isLevelEnabled('error')) return logLevel.ERROR;
  return logLevel.NOTHING;
}

/** Routes kafkajs's log entries to pino (kafkajs writes to the console by default). */
export function pinoLogCreator(logger: Logger): logCreator {
  return () =>
    ({ namespace, level, log }) => {
      // kafkajs stamps its own timestamp; pino adds one already.
      const { message, timestamp: _timestamp, ...fields } = log;
      const entry = { kafkaNamespace: namespace, ...fields };
      switch (level) {
        case logLevel.ERROR:
          return logger.error(entry, message);
        case logLevel.WARN:
          return logger.warn(entry, message);
        case logLevel.INFO:
          return logger.info(entry, message);
        case logLevel.DEBUG:
          return logger.debug(entry, message);
        case logLevel.NOTHING:
          return;
      }
    };
}
