import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export interface PackageInfo {
  version: string;
  bugs?: string | { url?: string };
}

let info: PackageInfo | undefined;

/**
 * Proctor's own package.json: the first one up from this module, which the build places at more than one depth
 * (dist/, and dist/proctor/ once bundled). Read once per process.
 */
export const packageInfo = (): PackageInfo => {
  if (info) return info;
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    try {
      info = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as PackageInfo;
      return info;
    } catch (error) {
      const parent = path.dirname(dir);
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || parent === dir) throw error;
      dir = parent;
    }
  }
};
