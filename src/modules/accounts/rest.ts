import { z } from 'zod';
import { router } from '../../rest/trpc.js';
import { adminProcedure, publicProcedure, signedInProcedure } from '../../rest/procedures.js';
import { idParam } from '../../rest/schemas.js';
import * as accounts from './service.js';
import * as apiTokens from './api-tokens.js';
import * as profile from './profile.js';
import * as users from './users.js';
import {
  apiTokenOutput,
  authResult,
  changePasswordInput,
  createApiTokenInput,
  createdApiTokenOutput,
  createdUserOutput,
  createUserInput,
  sessionOutput,
  signInInput,
  signUpInput,
  updateProfileInput,
  viewerOutput,
} from './schemas.js';
import { dateTime } from '../../rest/schemas.js';

const tags = ['Accounts'];
const tokenSchema = apiTokenOutput
  .extend({ createdAt: dateTime, lastUsedAt: dateTime.nullable(), expiresAt: dateTime.nullable(), revokedAt: dateTime.nullable() })
  .meta({ id: 'ApiToken' });

export const accountsRest = router({
  signUp: publicProcedure
    .meta({
      errors: { 409: 'An account with this email already exists', 429: 'Too many attempts from this address: retry after Retry-After seconds' },
      openapi: { method: 'POST', path: '/api/auth/sign-up/email', tags, summary: 'Create an account; answers a bearer token', protect: false },
    })
    .input(signUpInput)
    .output(authResult)
    .mutation(({ ctx, input }) => accounts.signUp(ctx.svc, input)),

  signIn: publicProcedure
    .meta({
      errors: { 429: 'Too many attempts from this address: retry after Retry-After seconds' },
      openapi: { method: 'POST', path: '/api/auth/sign-in/email', tags, summary: 'Sign in; answers a bearer token', protect: false },
    })
    .input(signInInput)
    .output(authResult)
    .mutation(({ ctx, input }) => accounts.signIn(ctx.svc, input)),

  signOut: signedInProcedure
    .meta({ openapi: { method: 'POST', path: '/api/auth/sign-out', tags, summary: 'End the current session' } })
    .input(z.object({}).strict().optional())
    .output(z.object({ success: z.boolean() }))
    .mutation(({ ctx }) => accounts.signOut(ctx.svc, ctx.headers)),

  getSession: publicProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/auth/get-session',
        tags,
        summary: 'The current session and user (null when signed out); never the session token',
        protect: false,
      },
    })
    .input(z.object({}).strict().optional())
    .output(sessionOutput.meta({ id: 'CurrentSession' }))
    .query(({ ctx }) => profile.getSession(ctx.svc, ctx.headers)),

  updateProfile: signedInProcedure
    .meta({ openapi: { method: 'POST', path: '/api/auth/update-user', tags, summary: 'Change your name and/or picture (an http(s) URL, or null)' } })
    .input(updateProfileInput)
    .output(viewerOutput)
    .mutation(({ ctx, input }) => profile.updateProfile(ctx.svc, input)),

  changePassword: signedInProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/auth/change-password',
        tags,
        summary: 'Change your password (needs the current one); optionally end every other session',
      },
    })
    .input(changePasswordInput)
    .output(z.object({ token: z.string().nullable() }))
    .mutation(({ ctx, input }) => profile.changePassword(ctx.svc, ctx.headers, input)),

  createUser: adminProcedure
    .meta({
      successStatus: 201,
      openapi: { method: 'POST', path: '/api/users', tags, summary: 'Create an account (administrators; works whatever SIGNUP says)' },
    })
    .input(createUserInput)
    .output(createdUserOutput)
    .mutation(({ ctx, input }) => users.createUser(ctx.svc, input)),

  me: signedInProcedure
    .meta({ openapi: { method: 'GET', path: '/api/users/me', tags, summary: 'The signed-in user' } })
    .input(z.object({}).strict().optional())
    .output(viewerOutput)
    .query(({ ctx }) => accounts.getViewer(ctx.svc)),

  createApiToken: signedInProcedure
    .meta({
      successStatus: 201,
      openapi: { method: 'POST', path: '/api/users/me/api-tokens', tags, summary: 'Create a personal API token (its secret is shown once)' },
    })
    .input(createApiTokenInput)
    .output(createdApiTokenOutput.extend({ apiToken: tokenSchema }))
    .mutation(({ ctx, input }) => apiTokens.createApiToken(ctx.svc, input)),

  listApiTokens: signedInProcedure
    .meta({ openapi: { method: 'GET', path: '/api/users/me/api-tokens', tags, summary: 'List personal API tokens (never their secrets)' } })
    .input(z.object({}).strict().optional())
    .output(z.array(tokenSchema))
    .query(({ ctx }) => apiTokens.listApiTokens(ctx.svc)),

  revokeApiToken: signedInProcedure
    .meta({ openapi: { method: 'DELETE', path: '/api/users/me/api-tokens/{id}', tags, summary: 'Revoke a personal API token' } })
    .input(idParam)
    .output(tokenSchema)
    .mutation(({ ctx, input }) => apiTokens.revokeApiToken(ctx.svc, input.id)),
});
