import { builder } from '../../graphql/builder.js';
import { decodeId } from '../../graphql/ids.js';
import type { Viewer } from '../../context.js';
import * as accounts from './service.js';
import * as apiTokens from './api-tokens.js';
import * as profile from './profile.js';
import * as users from './users.js';

export const UserRef = builder.prismaObject('User', {
  description: 'A person with an account. Their email is shown only to themselves (see Viewer).',
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    image: t.exposeString('image', { nullable: true }),
  }),
});

const InstanceRole = builder.enumType('InstanceRole', { values: ['admin', 'user'] as const });

export const ViewerRef = builder.objectRef<Viewer>('Viewer').implement({
  description: 'The signed-in user.',
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    email: t.exposeString('email'),
    image: t.exposeString('image', { nullable: true }),
    role: t.field({ type: InstanceRole, resolve: (viewer) => viewer.role }),
  }),
});

const AuthUser = builder.objectRef<accounts.AuthResult['user']>('AuthUser').implement({
  fields: (t) => ({ id: t.exposeID('id'), name: t.exposeString('name'), email: t.exposeString('email') }),
});

const AuthPayload = builder.objectRef<accounts.AuthResult>('AuthPayload').implement({
  description: 'A session: send `token` as `Authorization: Bearer <token>`.',
  fields: (t) => ({ token: t.exposeString('token'), user: t.field({ type: AuthUser, resolve: (result) => result.user }) }),
});

type ApiTokenPublic = Awaited<ReturnType<typeof apiTokens.listApiTokens>>[number];

const ApiTokenRef = builder.objectRef<ApiTokenPublic>('ApiToken').implement({
  description: 'A personal API token. Its secret is shown only once, when it is created.',
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    prefix: t.exposeString('prefix', { description: 'The first characters of the token, to recognise it.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    lastUsedAt: t.expose('lastUsedAt', { type: 'DateTime', nullable: true }),
    expiresAt: t.expose('expiresAt', { type: 'DateTime', nullable: true }),
    revokedAt: t.expose('revokedAt', { type: 'DateTime', nullable: true }),
  }),
});

const CreatedApiToken = builder.objectRef<{ token: string; apiToken: ApiTokenPublic }>('CreatedApiToken').implement({
  fields: (t) => ({
    token: t.exposeString('token', { description: 'The secret: store it now, it is not shown again.' }),
    apiToken: t.field({ type: ApiTokenRef, resolve: (result) => result.apiToken }),
  }),
});

const SignUpInput = builder.inputType('SignUpInput', {
  fields: (t) => ({ name: t.string({ required: true }), email: t.string({ required: true }), password: t.string({ required: true }) }),
});
const SignInInput = builder.inputType('SignInInput', {
  fields: (t) => ({ email: t.string({ required: true }), password: t.string({ required: true }) }),
});

const CreatedUserRef = builder.objectRef<users.CreatedUser>('CreatedUser').implement({
  description: 'An account created by an administrator.',
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    email: t.exposeString('email'),
    role: t.field({ type: InstanceRole, resolve: (user) => user.role }),
  }),
});

const CreateUserInput = builder.inputType('CreateUserInput', {
  fields: (t) => ({
    name: t.string({ required: true }),
    email: t.string({ required: true }),
    password: t.string({ required: true }),
    role: t.field({ type: InstanceRole }),
  }),
});
const UpdateProfileInput = builder.inputType('UpdateProfileInput', {
  fields: (t) => ({ name: t.string(), image: t.string({ description: 'An http(s) URL; null removes the picture.' }) }),
});
builder.queryFields((t) => ({
  viewer: t.field({
    type: ViewerRef,
    nullable: true,
    description: 'The signed-in user, or null.',
    resolve: (_root, _args, ctx) => ctx.viewer,
  }),
  apiTokens: t.field({
    type: [ApiTokenRef],
    authScopes: { signedIn: true },
    resolve: (_root, _args, ctx) => apiTokens.listApiTokens(ctx),
  }),
}));

builder.mutationFields((t) => ({
  signUp: t.field({
    type: AuthPayload,
    errors: {},
    args: { input: t.arg({ type: SignUpInput, required: true }) },
    resolve: (_root, { input }, ctx) => accounts.signUp(ctx, input),
  }),
  signIn: t.field({
    type: AuthPayload,
    errors: {},
    args: { input: t.arg({ type: SignInInput, required: true }) },
    resolve: (_root, { input }, ctx) => accounts.signIn(ctx, input),
  }),
  createUser: t.field({
    type: CreatedUserRef,
    errors: {},
    description: 'Creates an account (administrators; works whatever SIGNUP says).',
    args: { input: t.arg({ type: CreateUserInput, required: true }) },
    resolve: (_root, { input }, ctx) => users.createUser(ctx, { ...input, role: input.role ?? undefined }),
  }),
  updateProfile: t.field({
    type: ViewerRef,
    errors: {},
    args: { input: t.arg({ type: UpdateProfileInput, required: true }) },
    resolve: (_root, { input }, ctx) => profile.updateProfile(ctx, { name: input.name ?? undefined, image: input.image }),
  }),
  createApiToken: t.field({
    type: CreatedApiToken,
    errors: {},
    args: { name: t.arg.string({ required: true }), expiresInDays: t.arg.int() },
    resolve: (_root, args, ctx) => apiTokens.createApiToken(ctx, { name: args.name, expiresInDays: args.expiresInDays ?? undefined }),
  }),
  revokeApiToken: t.field({
    type: ApiTokenRef,
    errors: {},
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => apiTokens.revokeApiToken(ctx, decodeId(args.id, null, 'id')),
  }),
}));
