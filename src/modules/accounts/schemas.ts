import { z } from 'zod';

export const emailSchema = z.string().trim().toLowerCase().email({ message: 'must be a valid email address' }).max(254);

export const signUpInput = z
  .object({
    name: z.string().trim().min(1, { message: 'must not be empty' }).max(100),
    email: emailSchema,
    password: z.string().min(8, { message: 'must be at least 8 characters' }).max(128),
  })
  .strict();

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
  createdAt: z.date(),
  lastUsedAt: z.date().nullable(),
  expiresAt: z.date().nullable(),
  revokedAt: z.date().nullable(),
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
export type CreateApiTokenInput = z.infer<typeof createApiTokenInput>;
