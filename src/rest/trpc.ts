import { initTRPC, TRPCError } from '@trpc/server';
import type { OpenApiMeta } from 'trpc-to-openapi';
import type { ServiceContext } from '../context.js';
import { toErrorBody } from './error-body.js';

export interface RestContext {
  svc: ServiceContext;
  /** The request's headers, for the few operations that hand them to the auth library. */
  headers: Headers;
}

/** `successStatus` lets a procedure answer 201 on creation, as OASM's NestJS routes do. */
export type RestMeta = OpenApiMeta<{ successStatus?: number }>;

const t = initTRPC
  .context<RestContext>()
  .meta<RestMeta>()
  .create({
    // Never leak stack traces: the body is our error shape (rest/error-body.ts), nothing else.
    isDev: false,
    errorFormatter: ({ error }) => ({ app: toErrorBody(error) }) as never,
  });

export const router = t.router;
export const procedure = t.procedure;
export { TRPCError };
