import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { sqliteAddonFile } from '../../src/store/sqlite.js';

const require = createRequire(import.meta.url);
const installed = require.resolve('better-sqlite3/package.json');
const installedAddon = join(dirname(installed), 'build', 'Release', 'better_sqlite3.node');

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A copy of the installed better-sqlite3 package's manifest and addon, the addon in `buildDir`. */
const packageWithAddonIn = (buildDir: string): string => {
  const root = mkdtempSync(join(tmpdir(), 'proctor-sqlite-addon-'));
  dirs.push(root);
  const pkg = join(root, 'node_modules', 'better-sqlite3');
  mkdirSync(join(pkg, buildDir), { recursive: true });
  copyFileSync(installed, join(pkg, 'package.json'));
  copyFileSync(installedAddon, join(pkg, buildDir, 'better_sqlite3.node'));
  // Its own dependency, as an install lays it out beside it.
  symlinkSync(dirname(require.resolve('bindings/package.json')), join(root, 'node_modules', 'bindings'), 'dir');
  return join(pkg, 'package.json');
};

describe('sqliteAddonFile', () => {
  it('finds the installed addon in build/Release', () => {
    expect(sqliteAddonFile(installed)).toBe(installedAddon);
  });

  it("finds an addon built elsewhere by bindings' search from the package's own folder", () => {
    const manifest = packageWithAddonIn(join('build', 'Debug'));
    const found = sqliteAddonFile(manifest);
    expect(found).toBe(join(dirname(manifest), 'build', 'Debug', 'better_sqlite3.node'));
    const db = new BetterSqlite3(':memory:', { nativeBinding: found });
    try {
      expect(db.prepare('select 41 + 1 as answer').get()).toEqual({ answer: 42 });
    } finally {
      db.close();
    }
  });

  it('fails where the package has no addon at all', () => {
    const manifest = packageWithAddonIn('elsewhere');
    expect(() => sqliteAddonFile(manifest)).toThrow(/Could not locate the bindings file/);
  });
});
