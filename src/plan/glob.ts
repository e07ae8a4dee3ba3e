import { type Dirent, readdirSync } from 'node:fs';
import path from 'node:path';

/** True when `pattern` holds glob syntax (`*`, `?`, `[…]`, `{a,b}`). */
export const isGlob = (pattern: string): boolean => /[*?[{]/.test(pattern);

const toRegExp = (pattern: string): RegExp => {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern.charAt(i);
    if (c === '*' && pattern[i + 1] === '*') {
      // `**/` matches any number of directories, none included.
      out += pattern[i + 2] === '/' ? '(?:.*/)?' : '.*';
      i += pattern[i + 2] === '/' ? 2 : 1;
    } else if (c === '*') out += '[^/]*';
    else if (c === '?') out += '[^/]';
    else if (c === '{') out += '(?:';
    else if (c === '}') out += ')';
    else if (c === ',' && out.includes('(?:')) out += '|';
    else if (c === '[') {
      const end = pattern.indexOf(']', i);
      out += end > i ? pattern.slice(i, end + 1) : '\\[';
      i = Math.max(end, i);
    } else out += c.replace(/[.+^$()|\\]/g, '\\$&');
  }
  return new RegExp(`^${out}$`);
};

/**
 * The files under `baseDir` that `pattern` (POSIX, relative) matches, sorted so every machine expands a glob in
 * the same order. Node 20 has no fs.glob, and this is all a promptfoo config's `file://` globs need.
 */
export const globFiles = (pattern: string, baseDir: string): string[] => {
  const posix = pattern.split(path.sep).join('/');
  const fixed = posix.split('/');
  const firstGlob = fixed.findIndex(isGlob);
  const start = path.resolve(baseDir, fixed.slice(0, firstGlob).join('/'));
  const matcher = toRegExp(path.posix.normalize(posix));
  const out: string[] = [];
  const walk = (dir: string): void => {
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (entry.name === 'node_modules' || entry.name === '.git') continue;
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (matcher.test(path.relative(baseDir, full).split(path.sep).join('/'))) out.push(full);
    }
  };
  walk(start);
  return out.sort();
};
