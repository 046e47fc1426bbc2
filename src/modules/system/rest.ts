import { z } from 'zod';
import { procedure, router } from '../../rest/trpc.js';

/** Instance-level information; system configuration (name, logo) arrives with its own issue. */
export const systemRest = router({
  version: procedure
    .meta({ openapi: { method: 'GET', path: '/api/version', tags: ['System'], summary: 'API version', protect: false } })
    .input(z.object({}).strict().optional())
    .output(z.object({ name: z.string(), apiVersion: z.string() }))
    .query(() => ({ name: 'Perimeter', apiVersion: '1.0' })),
});
