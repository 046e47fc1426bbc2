/**
 * nuclei's `xpath` matchers and extractors (pkg/operators: MatchXPath / ExtractXPath): a body starting with
 * `<?xml` is read as XML (xmlquery), anything else as HTML (htmlquery, which never fails). Documents are read with
 * @xmldom/xmldom (no DTD entity expansion, no external resources) and queried with the `xpath` package (XPath 1.0,
 * as both Go libraries); in HTML, unprefixed names match the HTML elements as htmlquery's do.
 */
import { DOMParser } from '@xmldom/xmldom';
import xpath from 'xpath';

/** The package's compiled-expression API (its typings only declare `select`): `isHtml` matches HTML names as htmlquery. */
interface XPathExpression {
  select(options: { node: unknown; isHtml?: boolean }): unknown;
}
const parseXPath = (xpath as unknown as { parse(source: string): XPathExpression }).parse;
type XPathNode = { nodeType: number; textContent?: string | null; nodeValue?: string | null; getAttribute?: (name: string) => string | null };

const compiled = new Map<string, XPathExpression | Error>();
const MAX_CACHED = 1_000;

/** The parsed expression, or the reason it does not parse (cached: templates repeat their queries per response). */
function expression(source: string): XPathExpression | Error {
  let known = compiled.get(source);
  if (!known) {
    try {
      known = parseXPath(source);
    } catch (error) {
      known = new Error((error as Error).message || 'XPath parse error');
    }
    if (compiled.size >= MAX_CACHED) compiled.clear();
    compiled.set(source, known);
  }
  return known;
}

/** Why an expression cannot be used (at parse time, for a warning), or undefined when it parses. */
export function xpathProblem(source: string): string | undefined {
  const parsed = expression(source);
  return parsed instanceof Error ? parsed.message : undefined;
}

interface XPathDocument {
  node: unknown;
  isHtml: boolean;
}

/** The document a corpus is read as; undefined for XML that does not parse (nuclei then matches and extracts nothing). */
function documentOf(corpus: string): XPathDocument | undefined {
  const isXml = corpus.startsWith('<?xml');
  try {
    const parser = new DOMParser({
      onError: (level: string, message: string) => {
        if (isXml && level === 'fatalError') throw new Error(message);
      },
    });
    return { node: parser.parseFromString(corpus, isXml ? 'text/xml' : 'text/html'), isHtml: !isXml };
  } catch {
    return undefined;
  }
}

/** The nodes of each query, in order; undefined for a query that fails (nuclei skips it: `continue`). */
function queryAll(document: XPathDocument, queries: readonly string[]): Array<XPathNode[] | undefined> {
  return queries.map((source) => {
    const parsed = expression(source);
    if (parsed instanceof Error) return undefined;
    try {
      const result = parsed.select({ node: document.node, isHtml: document.isHtml });
      return Array.isArray(result) ? (result as unknown as XPathNode[]) : undefined;
    } catch {
      return undefined;
    }
  });
}

/** MatchXPath: `and` needs every (working) query to select a node, `or` one; a failing query is skipped. */
export function matchXPath(corpus: string, queries: readonly string[], condition: 'and' | 'or'): boolean {
  const document = documentOf(corpus);
  if (!document) return false;
  let matches = 0;
  for (const nodes of queryAll(document, queries)) {
    if (!nodes) continue;
    if (nodes.length === 0) {
      if (condition === 'and') return false;
      continue;
    }
    if (condition === 'or') return true;
    matches += nodes.length;
  }
  return matches > 0;
}

const ELEMENT_NODE = 1;

/** ExtractXPath: each selected node's text (an attribute node's value), or its `attribute` when one is named. */
export function extractXPath(corpus: string, queries: readonly string[], attribute: string | undefined): string[] {
  const document = documentOf(corpus);
  if (!document) return [];
  const values: string[] = [];
  for (const nodes of queryAll(document, queries)) {
    for (const node of nodes ?? []) {
      if (attribute) values.push(node.nodeType === ELEMENT_NODE ? (node.getAttribute?.(attribute) ?? '') : '');
      else values.push(node.textContent ?? node.nodeValue ?? '');
    }
  }
  return values;
}
