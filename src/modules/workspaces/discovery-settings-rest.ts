import { z } from 'zod';
import { signedInProcedure } from '../../rest/procedures.js';
import { dateTime, uuidParam } from '../../rest/schemas.js';
import * as settings from './discovery-settings.js';

const tags = ['Workspaces'];

const settingsSchema = z
  .object({
    workspaceId: z.string(),
    rootDomains: z.array(z.string()).meta({ description: "Names under these domains are in scope for discovery, besides each target's own domain." }),
    exclusions: z.array(z.string()).meta({ description: 'Exact host names and `*.suffix` patterns discovery never explores or records.' }),
    wordlist: z.array(z.string()).meta({ description: 'Labels discovery tries under each domain (brute force); may contain dots (`www.dev`).' }),
    wordlistSize: z.number().int(),
    updatedAt: dateTime.nullable().meta({ description: 'Null until the settings are first saved.' }),
  })
  .meta({ id: 'DiscoverySettings' });

/** A workspace's discovery settings (a sub-resource: the workspace list never carries the wordlist); spread into the workspaces router. */
export const discoverySettingsProcedures = {
  getDiscoverySettings: signedInProcedure
    .meta({
      openapi: { method: 'GET', path: '/api/workspaces/{id}/discovery-settings', tags, summary: "The workspace's discovery scope and wordlist (members)" },
    })
    .input(z.object({ id: uuidParam }).strict())
    .output(settingsSchema)
    .query(({ ctx, input }) => settings.getDiscoverySettings(ctx.svc, input.id)),

  updateDiscoverySettings: signedInProcedure
    .meta({
      openapi: {
        method: 'PATCH',
        path: '/api/workspaces/{id}/discovery-settings',
        tags,
        summary: `Replace root domains (≤ ${settings.MAX_ROOT_DOMAINS}), exclusions (≤ ${settings.MAX_EXCLUSIONS}) and/or the wordlist (≤ ${settings.MAX_WORDLIST_ENTRIES}); each list sent replaces the stored one (owners)`,
      },
    })
    .input(settings.discoverySettingsBody.extend({ id: uuidParam }))
    .output(settingsSchema)
    .mutation(({ ctx, input: { id, ...patch } }) => settings.updateDiscoverySettings(ctx.svc, id, patch)),
};
