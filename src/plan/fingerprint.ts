import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { contentHash } from '../content-hash.js';
import type { StepSpec } from '../engine/task.js';
import type { ConfigReferences } from '../records.js';
import { stableJson } from '../stable-json.js';
import { type TargetKind, targets } from '../targets/registry.js';
import { redactTargetConfig } from '../targets/secrets.js';
import type { TargetDef } from '../targets/target.js';
import { type Env, validationCopy } from './env.js';
import { displayPath } from './files.js';
import { fingerprintOf } from './identity.js';
import { parsedOnce } from './parse-once.js';
import type { AssertionSpec, TargetSpec } from './spec.js';

const sha = contentHash;

/** The parts of case fingerprints that are not the eval file's own text, each worked out once per command. */
export interface Fingerprints {
  /** A target's hash: its config with `${ENV}` resolved (secret values hashed), and the files its command names. */
  target(target: TargetSpec): string;
  /** The JSON of assertions, each with the content hashes of the files its grader names (from `evalDir`). */
  assertions(list: readonly AssertionSpec[], evalDir: string): string;
  /** The JSON of task steps around a prompt; '' when none, so fingerprints from before steps existed hold. */
  steps(list: readonly StepSpec[]): string;
  /** Content hashes of the project files hashed so far, by root-relative path: what a worker checks its own against. */
  projectFiles(): Record<string, string>;
}

/**
 * JSON of each item, worked out once per object: tests share their default_test assertions and steps, so a
 * large suite serialises each shared one once, not once per test. `arg` is the same for every use of an item.
 * Only an item that the previous list held too keeps its JSON: a test's own assertions are met once, and a
 * 100,000-test plan would otherwise hold the JSON of every one of them until all its cases are expanded.
 */
const jsonOnce = <T extends object, A>(view: (item: T, arg: A) => unknown) => {
  const cache = new WeakMap<T, string>();
  let lastItems: readonly T[] = [];
  let lastJson: string[] = [];
  return (items: readonly T[], arg: A): string => {
    const json = items.map((item) => {
      const cached = cache.get(item);
      if (cached !== undefined) return cached;
      const at = lastItems.indexOf(item);
      const fresh = at === -1 ? stableJson(view(item, arg)) : (lastJson[at] as string);
      if (at !== -1) cache.set(item, fresh);
      return fresh;
    });
    lastItems = items;
    lastJson = json;
    return json.join(',');
  };
};

/** The words of a command that could name a file: argv as is; a shell string split on blanks, quotes dropped. */
const words = (command: string | readonly string[]): string[] => {
  const list = typeof command === 'string' ? command.split(/\s+/).map((w) => w.replace(/^["']|["']$/g, '')) : command;
  // `--script=x.js`: the part after `=` may be the file.
  return list.flatMap((w) => (w.includes('=') ? [w, w.slice(w.indexOf('=') + 1)] : [w])).filter((w) => w !== '');
};

/**
 * Case fingerprints for one command (`env` is what its `${VAR}` references resolve against). A file is read and
 * hashed once however many cases name it; an unset variable stays as written, as the worker may have it.
 */
export const fingerprinter = (root: string, env: Env): Fingerprints => {
  const fileHashes = new Map<string, string | undefined>();
  const fileHash = (file: string): string | undefined => {
    if (fileHashes.has(file)) return fileHashes.get(file);
    let hash: string | undefined;
    try {
      if (statSync(file).isFile()) hash = sha(readFileSync(file));
    } catch {
      // Not a file (a program on PATH, a flag, a word of the prompt): nothing to hash.
    }
    fileHashes.set(file, hash);
    return hash;
  };

  /** Content hashes by root-relative path, so the same project hashes the same in every checkout. */
  const referencedFiles = (refs: ConfigReferences | undefined, baseDir: string): Record<string, string> | undefined => {
    if (!refs) return undefined;
    const out: Record<string, string> = {};
    for (const rel of refs.files ?? []) {
      const file = path.resolve(baseDir, rel);
      out[displayPath(file, root)] = fileHash(file) ?? 'missing';
    }
    const cwd = path.resolve(baseDir, refs.cwd ?? '.');
    for (const command of refs.commands ?? []) {
      for (const word of words(command)) {
        const file = path.resolve(cwd, word);
        const rel = path.relative(root, file);
        // Only the project's own files: hashing /bin/sh or a global tool would tie results to one machine.
        if (rel.startsWith('..') || path.isAbsolute(rel)) continue;
        const hash = fileHash(file);
        if (hash !== undefined) out[displayPath(file, root)] = hash;
      }
    }
    return Object.keys(out).length ? out : undefined;
  };

  const targetPrints = new WeakMap<TargetSpec, string>();
  const target = (t: TargetSpec): string => {
    let print = targetPrints.get(t);
    if (print === undefined) {
      // Every registry entry is a TargetDef; widened so one call serves every kind.
      const def: TargetDef = targets[t.kind as TargetKind];
      // `rate` paces the calls and changes no result: tuning it must not make a resume see drift.
      const { rate: _pacing, ...resolved } = validationCopy(t.config, env) as Record<string, unknown>;
      const parsed = def.config().safeParse(resolved, parsedOnce);
      const files = parsed.success ? referencedFiles(def.references?.(parsed.data), t.baseDir) : undefined;
      // A secret is hashed: a changed key shows, and the key itself is never kept.
      const config = redactTargetConfig(t.kind as TargetKind, resolved, (v) => `sha256:${sha(stableJson(v))}`);
      print = fingerprintOf({ kind: t.kind, config, ...(files ? { files } : {}) });
      targetPrints.set(t, print);
    }
    return print;
  };

  const assertions = jsonOnce<AssertionSpec, string>((a, evalDir) => {
    // Most have neither: serialised as they are, the same JSON without a copy.
    if (a.references === undefined && a.where === undefined) return a;
    const files = referencedFiles(a.references, evalDir);
    return { ...a, references: undefined, where: undefined, ...(files ? { files } : {}) };
  });
  // `baseDir` is absolute: a fingerprint must be the same in every checkout (paths in steps stay as written).
  const steps = jsonOnce<StepSpec, void>(({ baseDir: _absolute, ...rest }) => rest);

  const projectFiles = (): Record<string, string> => {
    const out: Record<string, string> = {};
    for (const [file, hash] of fileHashes) {
      const rel = path.relative(root, file);
      if (hash !== undefined && !rel.startsWith('..') && !path.isAbsolute(rel)) out[displayPath(file, root)] = hash;
    }
    return out;
  };

  return { target, assertions, steps, projectFiles };
};
