import type { z } from 'zod';
import { issuesToValidationError } from './errors.js';

/** Service-side validation: every adapter's input goes through the same schema, whatever it checked itself. */
export function validate<S extends z.ZodType>(schema: S, input: unknown): z.infer<S> {
  const result = schema.safeParse(input);
  if (!result.success) throw issuesToValidationError(result.error.issues);
  return result.data;
}
