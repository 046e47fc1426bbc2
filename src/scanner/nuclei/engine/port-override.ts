/**
 * `{{BaseURL}}:8443/path` and `{{RootURL}}:9001/...` in a `path` entry (nuclei's UpdateURLPortFromPayload): the
 * target's port becomes the given one for this request, so BaseURL, RootURL, Hostname and Port carry it, and the
 * `:port` is taken out of the path before rendering.
 */
import { type TargetInfo, parseTarget } from './target.js';

const URL_WITH_PORT = /^\{\{(BaseURL|RootURL)\}\}:(\d+)/;

export function targetWithPathPort(target: TargetInfo, pathTemplate: string): { target: TargetInfo; path: string } {
  const m = URL_WITH_PORT.exec(pathTemplate);
  if (!m) return { target, path: pathTemplate };
  const port = Number(m[2]);
  if (port < 1 || port > 65535) return { target, path: pathTemplate };
  const host = target.url.hostname.includes(':') ? `[${target.url.hostname}]` : target.url.hostname;
  const moved = parseTarget(`${target.url.scheme}://${host}:${port}${target.path}${target.query ? `?${target.query}` : ''}`);
  return { target: moved, path: pathTemplate.replace(`:${m[2]}`, '') };
}
