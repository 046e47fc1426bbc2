/**
 * Template variables a user gives (nuclei's `-var`): names and values as the workspace settings and the scan
 * options accept them, and how a scan's values are kept (sealed, never in the options a client reads back).
 */
import { z } from 'zod';
import type { SecretBox } from '../../crypto/secret-box.js';
import { RESERVED_VARIABLE_NAMES } from '../../scanner/nuclei/index.js';

export const MAX_TEMPLATE_VARIABLES = 100;
export const MAX_TEMPLATE_VARIABLE_LENGTH = 4_096;

/** nuclei's marker names: a letter or _, then letters, digits, _ and -; the engine's own names are refused. */
export const templateVariableName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_-]{0,63}$/, { message: 'must be a variable name: a letter or _, then letters, digits, _ or - (at most 64)' })
  .refine((name) => !RESERVED_VARIABLE_NAMES.has(name), { message: 'is a variable the engine sets from the target (BaseURL, Hostname, ...)' });

export const templateVariableValue = z
  .string({ message: 'must be a string' })
  .max(MAX_TEMPLATE_VARIABLE_LENGTH, { message: `must be at most ${MAX_TEMPLATE_VARIABLE_LENGTH} characters` });

/** A scan's own values: they win over the workspace's of the same name for that scan. */
export const scanTemplateVariablesInput = z
  .record(templateVariableName, templateVariableValue, { message: 'must be an object of variable names to string values' })
  .refine((values) => Object.keys(values).length <= MAX_TEMPLATE_VARIABLES, { message: `must hold at most ${MAX_TEMPLATE_VARIABLES} variables` })
  .meta({
    description: "Template variables for this scan only (e.g. username, password, token); they win over the workspace's. Stored encrypted, never returned.",
  });

export function sealVariables(box: SecretBox, values: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(values).map(([name, value]) => [name, box.encrypt(value)]));
}

/** Throws SecretBoxError when the instance secret changed since they were sealed. */
export function openVariables(box: SecretBox, stored: unknown): Record<string, string> {
  if (!stored || typeof stored !== 'object' || Array.isArray(stored)) return {};
  return Object.fromEntries(
    Object.entries(stored)
      .filter((entry): entry is [string, string] => typeof entry[1] === 'string')
      .map(([name, sealed]) => [name, box.decrypt(sealed)]),
  );
}
