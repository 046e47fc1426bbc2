/**
 * A web-reachable .git directory lets anyone download the repository: source, history, and often
 * credentials committed by mistake. Status 200 alone proves nothing (catch-all routes answer 200 to
 * everything), so the body must look like a real HEAD file.
 */
import { requestExcerpt, responseExcerpt } from './evidence.js';
import type { WebCheck } from './check.js';

const GIT_HEAD_PATH = '/.git/HEAD';
/** A symbolic ref, or a detached HEAD (SHA-1 or SHA-256 object id); nothing else on the line. */
const GIT_HEAD_CONTENT = /^(?:ref: (refs\/[^\s]+)|([0-9a-f]{40}|[0-9a-f]{64}))\s*$/;

export const httpExposedGit: WebCheck = {
  id: 'http-exposed-git',
  name: 'Exposed Git repository',
  severity: 'high',
  appliesTo: 'web',
  description:
    'The /.git directory is served over HTTP. Tools can reconstruct the whole repository from it, including source code, history and any secrets ever committed.',
  remediation:
    'Block access to /.git (and other dot-directories) in the web server, remove the directory from the deployed document root, and rotate any credentials that were ever in the repository.',
  async run(ctx) {
    const response = await ctx.fetchPath(GIT_HEAD_PATH, { maxBodyBytes: 1_024 });
    if (response.status !== 200) return [];
    const match = GIT_HEAD_CONTENT.exec(response.body);
    if (!match) return [];
    const extracted: Record<string, string> = match[1] ? { ref: match[1] } : { commit: match[2] };
    return [
      {
        matcher: GIT_HEAD_PATH,
        evidence: {
          url: response.url,
          request: requestExcerpt('GET', response.url),
          response: responseExcerpt(response, 200),
          extracted,
        },
      },
    ];
  },
};
