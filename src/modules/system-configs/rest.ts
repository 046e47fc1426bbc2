import { z } from 'zod';
import { router } from '../../rest/trpc.js';
import { adminProcedure, publicProcedure } from '../../rest/procedures.js';
import { dateTime } from '../../rest/schemas.js';
import * as systemConfigs from './service.js';
import { updateSystemConfigInput, uploadLogoInput } from './schemas.js';

const tags = ['System configuration'];

const systemConfigSchema = z
  .object({
    name: z.string(),
    logoPath: z.string().nullable(),
    logoUrl: z.string().nullable().meta({ description: 'What a browser loads: the logo route for an uploaded logo, the path or URL itself otherwise.' }),
    updatedAt: dateTime,
    updatedBy: z.string().nullable().meta({ description: 'User id of the administrator who last changed it.' }),
  })
  .meta({ id: 'SystemConfig' });

const publicSystemConfigSchema = z.object({ name: z.string(), logoUrl: z.string().nullable() }).meta({ id: 'PublicSystemConfig' });

export const systemConfigsRest = router({
  get: adminProcedure
    .meta({ openapi: { method: 'GET', path: '/api/system-configs', tags, summary: 'The system configuration (instance administrators)' } })
    .input(z.object({}).strict().optional())
    .output(systemConfigSchema)
    .query(({ ctx }) => systemConfigs.getSystemConfig(ctx.svc)),

  update: adminProcedure
    .meta({
      openapi: {
        method: 'PUT',
        path: '/api/system-configs',
        tags,
        summary: 'Update the name and logo path (instance administrators)',
        description: 'Fields left out stay as they are. `logoPath` null or `{}` clears the logo.',
      },
    })
    .input(updateSystemConfigInput)
    .output(z.object({ message: z.string() }))
    .mutation(async ({ ctx, input }) => {
      await systemConfigs.updateSystemConfig(ctx.svc, input);
      return { message: 'System configuration updated' };
    }),

  getPublic: publicProcedure
    .meta({
      openapi: { method: 'GET', path: '/api/system-configs/public', tags, summary: 'Name and logo URL for login pages (no authentication)', protect: false },
    })
    .input(z.object({}).strict().optional())
    .output(publicSystemConfigSchema)
    .query(({ ctx }) => systemConfigs.getPublicSystemConfig(ctx.svc)),

  uploadLogo: adminProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/system-configs/logo',
        tags,
        summary: 'Upload the instance logo (instance administrators)',
        description:
          'PNG, JPEG, GIF or WebP, at most 512 KiB decoded (413 beyond); the bytes must match `contentType`. SVG is refused (415). ' +
          'The logo is then served at GET /api/v1/api/system-configs/logo.',
        errorResponses: {
          400: 'Invalid input, or content that is not the declared image type',
          401: 'Authentication required',
          403: 'Not an instance administrator',
          413: 'The logo is larger than 512 KiB',
          415: 'Not PNG, JPEG, GIF or WebP (SVG is refused)',
        },
      },
    })
    .input(uploadLogoInput)
    .output(z.object({ logoPath: z.string() }))
    .mutation(async ({ ctx, input }) => ({ logoPath: (await systemConfigs.uploadLogo(ctx.svc, input)).logoPath! })),
});
