import { pino, type Logger } from 'pino';

export type { Logger };

/** Structured JSON logs. Secrets never reach them: the redact list covers credential headers and fields. */
export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { service: 'perimeter' },
    redact: {
      paths: ['req.headers.authorization', 'req.headers.cookie', 'req.headers["x-service-api-key"]', '*.password', '*.token', '*.apiKey'],
      censor: '[redacted]',
    },
  });
}
