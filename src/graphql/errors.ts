import { AppError, ConflictError, ForbiddenError, NotFoundError, RateLimitedError, UnauthenticatedError, ValidationError } from '../errors.js';
import { builder } from './builder.js';

/** Expected failures as typed union members of mutation results (the errors plugin's defaultTypes, builder.ts). */
export const ErrorInterface = builder.interfaceRef<AppError>('Error').implement({
  fields: (t) => ({
    message: t.exposeString('message'),
    code: t.exposeString('code'),
  }),
});

const FieldIssue = builder.objectRef<{ field: string; message: string }>('FieldIssue').implement({
  fields: (t) => ({ field: t.exposeString('field'), message: t.exposeString('message') }),
});

builder.objectType(ValidationError, {
  name: 'ValidationError',
  interfaces: [ErrorInterface],
  fields: (t) => ({ details: t.field({ type: [FieldIssue], resolve: (error) => error.details ?? [] }) }),
});

builder.objectType(RateLimitedError, {
  name: 'RateLimitedError',
  interfaces: [ErrorInterface],
  fields: (t) => ({ retryAfterSeconds: t.exposeInt('retryAfterSeconds') }),
});

for (const [ErrorClass, name] of [
  [UnauthenticatedError, 'UnauthenticatedError'],
  [ForbiddenError, 'ForbiddenError'],
  [NotFoundError, 'NotFoundError'],
  [ConflictError, 'ConflictError'],
] as const) {
  builder.objectType(ErrorClass as typeof AppError, { name, interfaces: [ErrorInterface], fields: () => ({}) });
}

builder.objectType(AppError, { name: 'AppError', interfaces: [ErrorInterface], fields: () => ({}) });
