/**
 * Reading the Prisma query Pothos hands a field, to decide whether a hand-written statement serves it
 * (workspaces/connection-page.ts, agents/messages-connection.ts): the query is plain data of unknown shape.
 */
export const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Whether the object names no key beyond `allowed`. */
export const onlyKeys = (value: Record<string, unknown>, allowed: readonly string[]) => Object.keys(value).every((key) => allowed.includes(key));
