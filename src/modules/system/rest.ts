import { z } from 'zod';
import { router } from '../../rest/trpc.js';
import { publicProcedure } from '../../rest/procedures.js';

/** Instance-level information; system configuration (name, logo) arrives with its own issue. */
export const systemRest = router({
  version: publicProcedure
    .meta({ openapi: { method: 'GET', path: '/api/version', tags: ['System'], summary: 'API version', protect: false } })
    .input(z.object({}).strict().optional())
    .output(z.object({ name: z.string(), apiVersion: z.string() }))
    .query(() => ({ name: 'Perimeter', apiVersion: '1.0' })),
});
