import { builder } from '../../graphql/builder.js';
import { SeverityEnum } from '../vulnerabilities/graphql.js';
import { TEMPLATE_PROTOCOLS, type TemplateSelection } from './selection.js';

/** The GraphQL face of a template selection (selection.ts), shared by workspace settings and scan options. */

const TemplateProtocolEnum = builder.enumType('TemplateProtocol', { values: TEMPLATE_PROTOCOLS });

export const TemplateSelectionRef = builder.objectRef<TemplateSelection>('TemplateSelection').implement({
  description: 'Which templates run: every filter set must pass and no exclusion may match. Absent lists do not filter.',
  fields: (t) => ({
    includeIds: t.exposeStringList('includeIds', { nullable: true, description: 'Only templates with one of these ids.' }),
    excludeIds: t.exposeStringList('excludeIds', { nullable: true, description: 'Never templates with one of these ids.' }),
    includeTags: t.exposeStringList('includeTags', { nullable: true, description: 'Only templates with at least one of these tags.' }),
    excludeTags: t.exposeStringList('excludeTags', { nullable: true, description: 'Never templates with one of these tags.' }),
    severities: t.expose('severities', { type: [SeverityEnum], nullable: true, description: "Only these severities (nuclei's `unknown` counts as info)." }),
    excludeSeverities: t.expose('excludeSeverities', { type: [SeverityEnum], nullable: true, description: 'Never these severities.' }),
    authors: t.exposeStringList('authors', { nullable: true, description: 'Only templates by one of these authors.' }),
    protocols: t.expose('protocols', { type: [TemplateProtocolEnum], nullable: true, description: 'Only templates with requests of one of these protocols.' }),
    useDefaultPack: t.exposeBoolean('useDefaultPack', { nullable: true, description: 'Whether the built-in pack runs (absent: yes).' }),
  }),
});

export const TemplateSelectionInput = builder.inputType('TemplateSelectionInput', {
  description: 'Which templates run: every filter given must pass and no exclusion may match. Lists hold at most 1,000 entries.',
  fields: (t) => ({
    includeIds: t.stringList({ description: 'Only templates with one of these ids (nuclei `id`).' }),
    excludeIds: t.stringList({ description: 'Never templates with one of these ids.' }),
    includeTags: t.stringList({ description: 'Only templates with at least one of these tags.' }),
    excludeTags: t.stringList({ description: 'Never templates with one of these tags.' }),
    severities: t.field({ type: [SeverityEnum], description: "Only these severities (nuclei's `unknown` counts as info)." }),
    excludeSeverities: t.field({ type: [SeverityEnum], description: 'Never these severities.' }),
    authors: t.stringList({ description: 'Only templates by one of these authors.' }),
    protocols: t.field({ type: [TemplateProtocolEnum], description: 'Only templates with requests of one of these protocols.' }),
    useDefaultPack: t.boolean({ description: 'Whether the built-in pack runs (default true); the workspace’s own templates run either way.' }),
  }),
});

export const TemplateVariableInput = builder.inputType('TemplateVariableInput', {
  description: 'A template variable (`{{name}}` in templates) and its value.',
  fields: (t) => ({
    name: t.string({ required: true, description: 'A letter or _, then letters, digits, _ or - (at most 64).' }),
    value: t.string({ description: 'At most 4,096 characters. In workspace settings: null unsets the variable, the mask keeps the stored value.' }),
  }),
});

/** GraphQL's list of name/value pairs as the services' record (a repeated name: the last wins). */
export function variablesRecord(list: readonly { name: string; value?: string | null }[] | null | undefined): Record<string, string | null> | undefined {
  if (!list) return undefined;
  return Object.fromEntries(list.map((entry) => [entry.name, entry.value ?? null]));
}
