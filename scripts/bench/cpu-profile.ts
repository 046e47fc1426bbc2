// Reads the V8 .cpuprofile the app wrote (node --cpu-prof) and prints where its CPU time went during each
// measured window: by package / source area, and the top functions by self time. A rough guide, not a profiler.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** A time window in microseconds of the monotonic clock (process.hrtime; V8 profiles use the same clock on Linux). */
export interface Window {
  label: string;
  startUs: number;
  endUs: number;
  /** Completed requests in the window: gives CPU time per request. */
  requests?: number;
}

export const nowUs = () => Number(process.hrtime.bigint() / 1000n);

function area(url: string, functionName: string, rootUrl: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : '(native/V8 builtins)';
  if (url.startsWith('node:')) return url.split('/').slice(0, 2).join('/');
  const modules = url.lastIndexOf('/node_modules/');
  if (modules >= 0) {
    const parts = url.slice(modules + '/node_modules/'.length).split('/');
    return parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!;
  }
  if (url.startsWith(rootUrl)) {
    const relative = url.slice(rootUrl.length);
    const parts = relative.split('/');
    return parts.length > 2 ? parts.slice(0, 2).join('/') : relative;
  }
  return url;
}

function shortUrl(url: string, rootUrl: string): string {
  if (url.startsWith(rootUrl)) return url.slice(rootUrl.length);
  const modules = url.lastIndexOf('/node_modules/');
  return modules >= 0 ? url.slice(modules + '/node_modules/'.length) : url;
}

function table(rows: Array<[string, number]>, total: number, limit: number): string[] {
  return rows
    .sort((a, b) => b[1] - a[1])
    .slice(0, limit)
    .map(([name, us]) => `    ${((us / total) * 100).toFixed(1).padStart(5)}%  ${name}`);
}

/** Summaries of every .cpuprofile in `dir`, one per window (or over the whole run when no window matches). */
/** BENCH_CPU_TOP: how many top functions to list (default 14); BENCH_CPU_INCLUSIVE: also list that many functions by inclusive time. */
const TOP = Number(process.env.BENCH_CPU_TOP || 14);
const TOP_INCLUSIVE = Number(process.env.BENCH_CPU_INCLUSIVE || 0);

function functionName(frame: CpuProfile['nodes'][number]['callFrame'], rootUrl: string): string {
  return `${frame.functionName || '(anonymous)'} ${frame.url ? `${shortUrl(frame.url, rootUrl)}:${frame.lineNumber + 1}` : ''}`.trim();
}

export async function summarizeCpuProfiles(dir: string, root: string, windows: Window[] = []): Promise<string> {
  const files = (await readdir(dir)).filter((file) => file.endsWith('.cpuprofile'));
  if (!files.length) return `CPU profile: none written in ${dir}`;
  const rootUrl = `${pathToFileURL(root).href}/`;
  const out: string[] = [];
  for (const file of files.sort()) {
    const profile = JSON.parse(await readFile(join(dir, file), 'utf8')) as CpuProfile;
    // CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile: thread 0 is the main thread, others are workers.
    const thread = file.split('.')[4];
    const who = thread === '0' ? 'main thread' : `thread ${thread}`;
    const byId = new Map(profile.nodes.map((node) => [node.id, node]));
    const parent = new Map<number, number>();
    for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
    // The areas anywhere on a node's stack (up to the last await: async stacks are cut there).
    const stackAreas = new Map<number, Set<string>>();
    const stackFunctions = new Map<number, Set<string>>();
    const functionsOnStack = (id: number): Set<string> => {
      let found = stackFunctions.get(id);
      if (found) return found;
      const up = parent.get(id);
      found = new Set(up === undefined ? [] : functionsOnStack(up));
      found.add(functionName(byId.get(id)!.callFrame, rootUrl));
      stackFunctions.set(id, found);
      return found;
    };
    const areasOnStack = (id: number): Set<string> => {
      let found = stackAreas.get(id);
      if (found) return found;
      const up = parent.get(id);
      found = new Set(up === undefined ? [] : areasOnStack(up));
      const frame = byId.get(id)!.callFrame;
      if (frame.url && !frame.url.startsWith('node:')) found.add(area(frame.url, frame.functionName, rootUrl));
      stackAreas.set(id, found);
      return found;
    };
    // Sample i was taken at startTime + sum(timeDeltas[0..i]); it stands for the interval up to the next one.
    const times: number[] = [];
    let t = profile.startTime;
    for (const delta of profile.timeDeltas) {
      t += delta;
      times.push(t);
    }
    const spans = windows.length ? windows : [{ label: 'whole run', startUs: profile.startTime, endUs: profile.endTime }];
    for (const span of spans) {
      const areas = new Map<string, number>();
      const inclusive = new Map<string, number>();
      const functions = new Map<string, number>();
      const functionsInclusive = new Map<string, number>();
      let total = 0;
      for (let i = 0; i < profile.samples.length - 1; i += 1) {
        if (times[i]! < span.startUs || times[i]! >= span.endUs) continue;
        const us = times[i + 1]! - times[i]!;
        const frame = byId.get(profile.samples[i]!)!.callFrame;
        if (frame.functionName === '(idle)') continue;
        total += us;
        const group = area(frame.url, frame.functionName, rootUrl);
        areas.set(group, (areas.get(group) ?? 0) + us);
        for (const onStack of areasOnStack(profile.samples[i]!)) inclusive.set(onStack, (inclusive.get(onStack) ?? 0) + us);
        const name = functionName(frame, rootUrl);
        functions.set(name, (functions.get(name) ?? 0) + us);
        if (TOP_INCLUSIVE)
          for (const onStack of functionsOnStack(profile.samples[i]!)) functionsInclusive.set(onStack, (functionsInclusive.get(onStack) ?? 0) + us);
      }
      if (!total) continue; // e.g. an idle worker thread's profile
      const wall = (span.endUs - span.startUs) / 1e6;
      const perRequest = span.requests ? `, ${(total / 1000 / span.requests).toFixed(2)} ms CPU per request` : '';
      out.push(`CPU profile of the app (${who}), ${span.label}: ${(total / 1e6).toFixed(1)}s busy of ${wall.toFixed(1)}s${perRequest}; % of busy time`);
      out.push('  self time by area:');
      out.push(...table([...areas], total, 14));
      out.push('  on the stack (inclusive; stacks end at the last await, so async callers are missing; rows overlap):');
      out.push(...table([...inclusive], total, 14));
      out.push('  top functions:');
      out.push(...table([...functions], total, TOP));
      if (TOP_INCLUSIVE) {
        out.push('  functions on the stack (inclusive, up to the last await):');
        out.push(...table([...functionsInclusive], total, TOP_INCLUSIVE));
      }
    }
  }
  return out.join('\n');
}
