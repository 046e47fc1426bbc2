import { z } from 'zod';

/** Sources a scan may switch off one by one; pivots (certificates, links, CNAMEs) follow the scan's own probes. */
export const DISCOVERY_STEP_SOURCES = ['bruteforce', 'ct', 'dns', 'axfr', 'permutations'] as const;
export type DiscoveryStepSource = (typeof DISCOVERY_STEP_SOURCES)[number];

/** Labels a scan (or a workspace) may add to the built-in list. */
export const MAX_EXTRA_WORDLIST = 10_000;

/** A label to try under a domain: dot-separated DNS labels (`www.dev` is allowed), lower-case. */
export const wordlistLabel = z
  .string()
  .trim()
  .toLowerCase()
  .max(200, { message: 'must be at most 200 characters' })
  .regex(/^[a-z0-9_]([a-z0-9_-]{0,62})(\.[a-z0-9_]([a-z0-9_-]{0,62}))*$/, {
    message: 'must be DNS labels (letters, digits, "-" and "_", dot-separated, each at most 63 characters)',
  });

/** Bounds that keep one scan's discovery finite however big the zone: rounds, names, guesses, questions. */
export const discoveryOptionsInput = z
  .object({
    wordlist: z
      .array(wordlistLabel)
      .max(MAX_EXTRA_WORDLIST, { message: `must have at most ${MAX_EXTRA_WORDLIST} labels` })
      .optional()
      .meta({ description: 'Labels tried in addition to the built-in list (the 4,989 most common labels) and the workspace list.' }),
    builtinWordlist: z.boolean().optional().meta({ description: 'Whether the built-in list is used (default true).' }),
    sources: z
      .array(z.enum(DISCOVERY_STEP_SOURCES, { message: `must be one of: ${DISCOVERY_STEP_SOURCES.join(', ')}` }))
      .max(DISCOVERY_STEP_SOURCES.length)
      .optional()
      .meta({ description: 'Sources to use (default all); certificate, link and CNAME pivots follow the scan itself.' }),
    maxDepth: z.number().int().min(1).max(3).optional().meta({ description: 'Rounds of recursion under found names, 1 to 3 (default 2).' }),
    maxNames: z.number().int().min(1).max(10_000).optional().meta({ description: 'Host names recorded per scan, 1 to 10,000 (default 1,000).' }),
    maxPermutations: z.number().int().min(0).max(20_000).optional().meta({ description: 'Permutation guesses per round, 0 to 20,000 (default 1,000).' }),
  })
  .strict();

export type DiscoveryOptionsInput = z.infer<typeof discoveryOptionsInput>;

export interface DiscoveryOptions {
  wordlist: string[];
  builtinWordlist: boolean;
  sources: DiscoveryStepSource[];
  maxDepth: number;
  maxNames: number;
  maxPermutations: number;
}

export const DEFAULT_DISCOVERY_OPTIONS: DiscoveryOptions = {
  wordlist: [],
  builtinWordlist: true,
  sources: [...DISCOVERY_STEP_SOURCES],
  maxDepth: 2,
  maxNames: 1_000,
  maxPermutations: 1_000,
};

export function resolveDiscoveryOptions(input: DiscoveryOptionsInput = {}): DiscoveryOptions {
  const defined = Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined));
  const options = { ...DEFAULT_DISCOVERY_OPTIONS, ...defined } as DiscoveryOptions;
  return { ...options, wordlist: [...new Set(options.wordlist)], sources: [...new Set(options.sources)] };
}
