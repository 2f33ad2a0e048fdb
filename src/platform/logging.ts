import pino, { type DestinationStream, type Logger } from 'pino';

/**
 * The service's logger: JSON lines, with credentials censored wherever a log call might carry
 * them (request headers, bodies, errors). What never reaches a log is still kept out at the source.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = {
    level,
    redact: {
      paths: ['req.headers.authorization', 'req.headers.cookie', '*.password', '*.newPassword', '*.currentPassword', '*.token', '*.refreshToken', '*.secret', '*.clientSecret', '*.mfaToken', '*.mfa_token', '*.recoveryCodes', '*.otpauthUrl'],
      censor: '[REDACTED]',
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
