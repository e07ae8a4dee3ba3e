import { createHash } from 'node:crypto';
import path from 'node:path';
import { z } from 'zod';
import { once } from '../once.js';

/**
 * A workspace as a user writes it (an eval's `workspace:` or a task's `workspace` step). Relative paths stay
 * as written, so a fingerprint is the same in every checkout; `resolveSpec` makes them absolute.
 */
export const workspaceSpecSchema = once(() => {
  const setupCommand = z.strictObject({
    /** A string runs through /bin/sh; an argv array runs the program directly. */
    command: z.union([z.string().min(1), z.array(z.string()).min(1)]),
    /** Relative to the workspace root. */
    cwd: z.string().optional(),
    /** Added to the environment; `${VAR}` is resolved in the executing process, so its value is never stored. */
    env: z.record(z.string(), z.string()).default({}),
    timeout_s: z.number().positive().default(600),
  });

  const repo = z.strictObject({
    /** A git URL, or a local repository relative to the file that declares the workspace. */
    url: z.string().min(1),
    /** A branch, tag or commit; default the repository's HEAD. */
    ref: z.string().min(1).optional(),
    /** Where it goes inside the workspace; default the workspace root itself. */
    path: z.string().min(1).default('.'),
  });

  return z
    .strictObject({
      /** A directory copied into the workspace root (over any repository checked out there). */
      template: z.string().min(1).optional(),
      repos: z.array(repo).default([]),
      /** Commands run once per materialisation, after the copy and the clones (`npm ci`); their result is the baseline. */
      setup: z.array(z.union([z.string().min(1), setupCommand])).default([]),
      /** Files (or directories) of the workspace saved as artifacts of each case, besides its diff. */
      files: z.array(z.string().min(1)).default([]),
      /** A larger named file is listed as skipped, not saved. */
      max_bytes: z.int().positive().default(1_000_000),
      /** false: every case gets a fresh materialisation, removed after it (no reuse). */
      pool: z.boolean().default(true),
    })
    .superRefine((spec, ctx) => {
      const seen = new Set<string>();
      spec.repos.forEach((r, i) => {
        const where = path.posix.normalize(r.path.replaceAll('\\', '/')).replace(/\/$/, '');
        if (where.startsWith('..') || path.isAbsolute(r.path))
          ctx.addIssue({ code: 'custom', path: ['repos', i, 'path'], message: 'must stay inside the workspace' });
        if (seen.has(where))
          ctx.addIssue({ code: 'custom', path: ['repos', i, 'path'], message: `two repositories at "${where}"` });
        seen.add(where);
      });
      if (seen.has('.') && seen.size > 1)
        ctx.addIssue({ code: 'custom', path: ['repos'], message: 'a repository at the root cannot hold others' });
    });
});
export type WorkspaceSpec = z.output<ReturnType<typeof workspaceSpecSchema>>;

export interface SetupCommand {
  command: string | string[];
  cwd: string;
  env: Record<string, string>;
  timeoutS: number;
}

/** A spec with every path absolute (sources) or normalised (inside the workspace): what a pool is keyed by. */
export interface ResolvedSpec {
  template: string | null;
  repos: { url: string; ref: string | null; path: string }[];
  setup: SetupCommand[];
  files: string[];
  maxBytes: number;
  pool: boolean;
}

const isUrl = (s: string): boolean => /^[a-z][a-z0-9+.-]*:\/\//i.test(s) || /^[^/\\]+@[^:]+:/.test(s);

const inside = (p: string): string => path.posix.normalize(p.replaceAll('\\', '/')).replace(/\/$/, '') || '.';

export const resolveSpec = (spec: WorkspaceSpec, baseDir: string): ResolvedSpec => ({
  template: spec.template === undefined ? null : path.resolve(baseDir, spec.template),
  repos: spec.repos.map((r) => ({
    url: isUrl(r.url) ? r.url : path.resolve(baseDir, r.url),
    ref: r.ref ?? null,
    path: inside(r.path),
  })),
  setup: spec.setup.map((s) =>
    typeof s === 'string'
      ? { command: s, cwd: '.', env: {}, timeoutS: 600 }
      : { command: s.command, cwd: inside(s.cwd ?? '.'), env: s.env, timeoutS: s.timeout_s },
  ),
  files: spec.files,
  maxBytes: spec.max_bytes,
  pool: spec.pool,
});

/**
 * The pool key: two steps with the same resolved spec share slots. `files` and `max_bytes` only decide what is
 * saved after a case, not what a slot holds, so they stay out of it.
 */
export const specKey = (spec: ResolvedSpec): string =>
  createHash('sha256')
    .update(JSON.stringify([spec.template, spec.repos, spec.setup, spec.pool]))
    .digest('hex')
    .slice(0, 16);
