/**
 * Expected failures, with stable codes. REST maps `code` to a status through ERROR_STATUS (the one table);
 * GraphQL exposes them as typed errors (see graphql/errors.ts). Anything else is unexpected and masked.
 */
export const ERROR_STATUS = {
  BAD_REQUEST: 400,
  VALIDATION_FAILED: 400,
  WORKSPACE_REQUIRED: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  SIGNUP_CLOSED: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RATE_LIMITED: 429,
  INTERNAL: 500,
  UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** Reason phrases for the `error` field of the REST error body. */
const REASON: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

export function reasonPhrase(status: number): string {
  return REASON[status] ?? 'Error';
}

export interface FieldIssue {
  field: string;
  message: string;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details?: FieldIssue[];
  constructor(code: ErrorCode, message: string, details?: FieldIssue[]) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.details = details;
  }
  get status(): number {
    return ERROR_STATUS[this.code];
  }
}

export class ValidationError extends AppError {
  constructor(message: string, details?: FieldIssue[]) {
    super('VALIDATION_FAILED', message, details);
    this.name = 'ValidationError';
  }
}

export class UnauthenticatedError extends AppError {
  constructor(message = 'Authentication required: send Authorization: Bearer <token>') {
    super('UNAUTHENTICATED', message);
    this.name = 'UnauthenticatedError';
  }
}

export class ForbiddenError extends AppError {
  constructor(message = 'You are not allowed to do this') {
    super('FORBIDDEN', message);
    this.name = 'ForbiddenError';
  }
}

export class NotFoundError extends AppError {
  constructor(what: string) {
    super('NOT_FOUND', `${what} not found`);
    this.name = 'NotFoundError';
  }
}

export class ConflictError extends AppError {
  constructor(message: string) {
    super('CONFLICT', message);
    this.name = 'ConflictError';
  }
}

export class RateLimitedError extends AppError {
  readonly retryAfterSeconds: number;
  constructor(retryAfterSeconds: number) {
    super('RATE_LIMITED', `Too many attempts; retry in ${retryAfterSeconds} s`);
    this.name = 'RateLimitedError';
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** The REST error body, one shape everywhere (documented in the OpenAPI document). */
export interface ErrorBody {
  statusCode: number;
  error: string;
  code: ErrorCode;
  message: string;
  details?: FieldIssue[];
  /** Present on 429 and on 503 for an unreachable database: the same value as the Retry-After header. */
  retryAfterSeconds?: number;
}

export function errorBody(error: AppError): ErrorBody {
  return {
    statusCode: error.status,
    error: reasonPhrase(error.status),
    code: error.code,
    message: error.message,
    ...(error.details?.length ? { details: error.details } : {}),
    ...(typeof (error as { retryAfterSeconds?: unknown }).retryAfterSeconds === 'number'
      ? { retryAfterSeconds: (error as RateLimitedError).retryAfterSeconds }
      : {}),
  };
}

/** Turns zod issues into field-level details and a one-line message that names the fields. */
export function issuesToValidationError(issues: ReadonlyArray<{ path: PropertyKey[]; message: string; code?: string; keys?: string[] }>): ValidationError {
  const details = issues.flatMap((issue) => {
    const at = issue.path.map(String).join('.');
    // An unknown field is reported under its own name, so the client sees which one to drop.
    if (issue.code === 'unrecognized_keys' && issue.keys?.length) {
      return issue.keys.map((key) => ({ field: at ? `${at}.${key}` : key, message: 'is not a known field' }));
    }
    return [{ field: at || '(body)', message: issue.message }];
  });
  const summary = details.map((d) => `${d.field}: ${d.message}`).join('; ');
  return new ValidationError(`Invalid input: ${summary}`, details);
}
