import { AppError, ValidationError } from '../errors.js';

/**
 * How deep a request's JSON may nest. The deepest input any operation declares is a few levels (tool results:
 * findings[].classification.{…}); thousands of levels would overflow JSON.stringify and recursive validators.
 */
export const MAX_INPUT_DEPTH = 64;

const NUL = '\u0000';

function fieldName(path: readonly (string | number)[]): string {
  return path.length ? path.map(String).join('.') : '(body)';
}

export interface InspectOptions {
  /** Look for NUL characters (default true). */
  nul?: boolean;
  /** Top-level fields whose text the service checks itself, with a better message (a template's line and column). */
  textCheckedBy?: readonly string[];
}

/**
 * Why a request's input is refused before its schema sees it, or null: nesting deeper than MAX_INPUT_DEPTH,
 * or a NUL character in any string or key (PostgreSQL cannot store it in text, so it would fail as a 500 at
 * the database). Walks without recursion, so the depth check itself cannot overflow the stack.
 */
export function inputProblem(value: unknown, options: InspectOptions = {}): AppError | null {
  const checkNul = options.nul ?? true;
  const stack: { value: unknown; path: (string | number)[] }[] = [{ value, path: [] }];
  while (stack.length) {
    const { value: current, path } = stack.pop()!;
    if (typeof current === 'string') {
      if (checkNul && current.includes(NUL) && !(path.length === 1 && options.textCheckedBy?.includes(String(path[0])))) return nulError(path);
      continue;
    }
    if (typeof current !== 'object' || current === null) continue;
    if (path.length >= MAX_INPUT_DEPTH) {
      return new AppError('BAD_REQUEST', `The request nests deeper than ${MAX_INPUT_DEPTH} levels (at ${fieldName(path.slice(0, 5))}…)`);
    }
    if (Array.isArray(current)) {
      current.forEach((item, index) => {
        stack.push({ value: item, path: [...path, index] });
      });
      continue;
    }
    for (const [key, item] of Object.entries(current)) {
      if (checkNul && key.includes(NUL)) return nulError([...path, key.replaceAll(NUL, '\\u0000')]);
      stack.push({ value: item, path: [...path, key] });
    }
  }
  return null;
}

function nulError(path: (string | number)[]): ValidationError {
  const field = fieldName(path);
  return new ValidationError(`Invalid input: ${field}: must not contain NUL characters (\\u0000)`, [
    { field, message: 'must not contain NUL characters (\\u0000)' },
  ]);
}

/** Every operation that takes a body declares a JSON object; anything else (`[]`, `"text"`, `3`, `null`) is a 400. */
export function bodyShapeProblem(body: unknown): AppError | null {
  if (body === undefined) return null;
  if (typeof body === 'object' && body !== null && !Array.isArray(body)) return null;
  const what = Array.isArray(body) ? 'an array' : body === null ? 'null' : `a ${typeof body}`;
  return new AppError('BAD_REQUEST', `The request body must be a JSON object, not ${what}`);
}
