import { builder } from '../../graphql/builder.js';
import { decodeId } from '../../graphql/ids.js';
import { WorkspaceRef } from './graphql.js';
import * as settings from './discovery-settings.js';

const DiscoverySettingsRef = builder.objectRef<settings.DiscoverySettingsResponse>('DiscoverySettings').implement({
  description: 'What a workspace tells asset discovery: its scope (root domains minus exclusions) and its brute-force wordlist.',
  fields: (t) => ({
    rootDomains: t.exposeStringList('rootDomains', { description: "Names under these domains are in scope, besides each target's own domain." }),
    exclusions: t.exposeStringList('exclusions', { description: 'Exact host names and `*.suffix` patterns discovery never explores or records.' }),
    wordlist: t.exposeStringList('wordlist', { description: 'Labels tried under each domain (brute force); may contain dots (`www.dev`).' }),
    wordlistSize: t.exposeInt('wordlistSize'),
    updatedAt: t.expose('updatedAt', { type: 'DateTime', nullable: true, description: 'Null until the settings are first saved.' }),
  }),
});

builder.objectField(WorkspaceRef, 'discoverySettings', (t) =>
  t.loadable({
    type: DiscoverySettingsRef,
    description: 'Discovery scope and wordlist (empty until saved). One query for every workspace of a list.',
    // The parent is a workspace the caller can see (every lookup applies the visibility rule).
    load: (ids: string[], ctx) => settings.discoverySettingsOfWorkspaces(ctx, ids),
    resolve: (workspace) => workspace.id,
  }),
);

const DiscoverySettingsInput = builder.inputType('DiscoverySettingsInput', {
  description: 'Each list given replaces the stored one; at least one. Blank entries are dropped, duplicates removed.',
  fields: (t) => ({
    rootDomains: t.stringList({ description: `At most ${settings.MAX_ROOT_DOMAINS} domain names with at least two labels (no IP addresses).` }),
    exclusions: t.stringList({ description: `At most ${settings.MAX_EXCLUSIONS} exact host names or \`*.suffix\` patterns.` }),
    wordlist: t.stringList({ description: `At most ${settings.MAX_WORDLIST_ENTRIES} labels (dot-separated parts of letters, digits, _ and -).` }),
  }),
});

builder.mutationFields((t) => ({
  updateDiscoverySettings: t.field({
    type: DiscoverySettingsRef,
    errors: {},
    description: "Replaces the workspace's root domains, exclusions and/or wordlist (whoever may update the workspace).",
    args: { workspaceId: t.arg.id({ required: true }), input: t.arg({ type: DiscoverySettingsInput, required: true }) },
    resolve: (_root, { workspaceId, input }, ctx) =>
      settings.updateDiscoverySettings(ctx, decodeId(workspaceId, WorkspaceRef, 'workspaceId'), {
        rootDomains: input.rootDomains ?? undefined,
        exclusions: input.exclusions ?? undefined,
        wordlist: input.wordlist ?? undefined,
      }),
  }),
}));
