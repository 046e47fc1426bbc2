import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger };

/**
 * Structured JSON logs. Secrets never reach them: the redact list covers credential headers and fields.
 * `destination` defaults to stdout (tests pass their own to read the lines).
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = {
    level,
    base: { service: 'perimeter' },
    redact: {
      paths: ['req.headers.authorization', 'req.headers.cookie', 'req.headers["x-service-api-key"]', '*.password', '*.token', '*.apiKey'],
      censor: '[redacted]',
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
