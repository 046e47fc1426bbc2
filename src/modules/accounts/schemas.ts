import { z } from 'zod';
import { dateTime } from '../../rest/schemas.js';

export const emailSchema = z.string().trim().toLowerCase().email({ message: 'must be a valid email address' }).max(254);

const NO_NUL = { message: 'must not contain NUL characters' };
export const nameSchema = z
  .string()
  .trim()
  .min(1, { message: 'must not be empty' })
  .max(100)
  .refine((value) => !value.includes('\0'), NO_NUL);
export const passwordSchema = z
  .string()
  .min(8, { message: 'must be at least 8 characters' })
  .max(128)
  .refine((value) => !value.includes('\0'), NO_NUL);

export const signUpInput = z
  .object({
    name: nameSchema,
    email: emailSchema,
    password: passwordSchema,
  })
  .strict();

export const createUserInput = z
  .object({
    name: nameSchema,
    email: emailSchema,
    password: passwordSchema,
    role: z.enum(['admin', 'user']).default('user'),
  })
  .strict();

export const createdUserOutput = z.object({ id: z.string(), name: z.string(), email: z.string(), role: z.enum(['admin', 'user']) }).meta({ id: 'CreatedUser' });

export const signInInput = z
  .object({
    email: emailSchema,
    password: z.string().min(1, { message: 'must not be empty' }).max(128),
  })
  .strict();

export const userSummary = z.object({ id: z.string(), name: z.string(), email: z.string() });

export const authResult = z.object({ token: z.string(), user: userSummary });

export const createApiTokenInput = z
  .object({
    name: z.string().trim().min(1, { message: 'must not be empty' }).max(100),
    expiresInDays: z.number().int().min(1).max(3650).optional(),
  })
  .strict();

export const apiTokenOutput = z.object({
  id: z.string(),
  name: z.string(),
  prefix: z.string(),
  createdAt: dateTime,
  lastUsedAt: dateTime.nullable(),
  expiresAt: dateTime.nullable(),
  revokedAt: dateTime.nullable(),
});

export const createdApiTokenOutput = z.object({ token: z.string(), apiToken: apiTokenOutput });

export const viewerOutput = z.object({
  id: z.string(),
  name: z.string(),
  email: z.string(),
  image: z.string().nullable(),
  role: z.enum(['admin', 'user']),
});

export type SignUpInput = z.infer<typeof signUpInput>;
export type SignInInput = z.infer<typeof signInInput>;
export type CreateUserInput = z.input<typeof createUserInput>;
export type CreateApiTokenInput = z.infer<typeof createApiTokenInput>;

/** A profile picture is a link the browser fetches: only http(s), never javascript:, data: or file:. */
const imageUrl = z
  .string()
  .trim()
  .max(2048)
  .refine((value) => URL.canParse(value) && /^https?:$/.test(new URL(value).protocol), { message: 'must be an http:// or https:// URL' });

export const updateProfileInput = z
  .object({ name: nameSchema.optional(), image: imageUrl.nullable().optional() })
  .strict()
  .refine((value) => value.name !== undefined || value.image !== undefined, { message: 'send name and/or image' });

export const changePasswordInput = z
  .object({
    currentPassword: z.string().min(1, { message: 'must not be empty' }).max(128),
    newPassword: passwordSchema,
    revokeOtherSessions: z.boolean().default(false),
  })
  .strict();

export const sessionOutput = z
  .object({
    session: z.object({
      id: z.string(),
      userId: z.string(),
      expiresAt: dateTime,
      createdAt: dateTime,
      updatedAt: dateTime,
      ipAddress: z.string().nullable(),
      userAgent: z.string().nullable(),
    }),
    user: viewerOutput,
  })
  .nullable();

export type UpdateProfileInput = z.input<typeof updateProfileInput>;
export type ChangePasswordInput = z.input<typeof changePasswordInput>;
