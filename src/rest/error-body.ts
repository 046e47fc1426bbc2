import { TRPCError } from '@trpc/server';
import { databaseUnavailableError } from '../db/unavailable.js';
import { AppError, errorBody, issuesToValidationError, reasonPhrase, type ErrorBody } from '../errors.js';

const TRPC_CODE_TO_APP: Record<string, { code: AppError['code']; message: string }> = {
  PARSE_ERROR: { code: 'BAD_REQUEST', message: 'The request body is not valid JSON' },
  PAYLOAD_TOO_LARGE: { code: 'PAYLOAD_TOO_LARGE', message: 'The request body is too large' },
  UNSUPPORTED_MEDIA_TYPE: { code: 'UNSUPPORTED_MEDIA_TYPE', message: 'Send the body as application/json' },
  NOT_FOUND: { code: 'NOT_FOUND', message: 'No such route' },
  METHOD_NOT_SUPPORTED: { code: 'METHOD_NOT_ALLOWED', message: 'Method not allowed on this route' },
  UNAUTHORIZED: { code: 'UNAUTHENTICATED', message: 'Authentication required' },
  FORBIDDEN: { code: 'FORBIDDEN', message: 'Forbidden' },
  BAD_REQUEST: { code: 'BAD_REQUEST', message: 'Bad request' },
};

function isZodError(value: unknown): value is { issues: { path: PropertyKey[]; message: string }[] } {
  return value instanceof Error && value.name === 'ZodError' && Array.isArray((value as { issues?: unknown }).issues);
}

/**
 * One REST error body for everything that can go wrong: expected failures keep their code and message,
 * input validation names each field, anything unexpected is masked as a 500.
 */
export function toErrorBody(error: unknown): ErrorBody {
  const cause = error instanceof TRPCError ? error.cause : error;
  if (cause instanceof AppError) return errorBody(cause);
  if (isZodError(cause)) return errorBody(issuesToValidationError(cause.issues));
  if (error instanceof TRPCError) {
    const mapped = TRPC_CODE_TO_APP[error.code];
    if (mapped)
      return errorBody(
        new AppError(mapped.code, error.code === 'UNSUPPORTED_MEDIA_TYPE' || error.code === 'NOT_FOUND' ? mapped.message : error.message || mapped.message),
      );
  }
  const unavailable = databaseUnavailableError(cause);
  if (unavailable) return errorBody(unavailable);
  return { statusCode: 500, error: reasonPhrase(500), code: 'INTERNAL', message: 'Internal server error' };
}
