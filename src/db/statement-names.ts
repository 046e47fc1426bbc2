import type { SqlQuery } from '@prisma/driver-adapter-utils';

/** Distinct statements this process names; later ones run unnamed (each connection keeps what it prepared). */
export const MAX_NAMED_STATEMENTS = 1_000;
/**
 * Statements with more parameters than this run unnamed: those are IN lists of every length, a new text per
 * length, which would fill the cap with statements used once.
 */
export const MAX_NAMED_PARAMETERS = 64;

/**
 * Names for the statements Prisma sends to PostgreSQL (PrismaPg's `statementNameGenerator`). A named statement
 * is parsed once per connection and, after a few runs, planned once: on a list page PostgreSQL spent more time
 * planning the statements (about 2 ms for the workspace page) than running them. One name per distinct text,
 * numbered in the order first seen, so a name never means two texts (node-postgres refuses that).
 */
export function statementNames(): (query: SqlQuery) => string {
  const names = new Map<string, string>();
  return (query) => {
    const known = names.get(query.sql);
    if (known) return known;
    // Undefined is what node-postgres takes for an unnamed statement (the generator's type says string).
    if (names.size >= MAX_NAMED_STATEMENTS || query.args.length > MAX_NAMED_PARAMETERS) return undefined as unknown as string;
    const name = `perimeter_${names.size + 1}`;
    names.set(query.sql, name);
    return name;
  };
}
