import { appendFileSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The groups (commands) that appended to a bundle, one id a line, in order: written before a group's first case
 * is submitted, so a follower killed before it wrote a row still leaves its group here for the next command
 * (or `results pull`) to complete the bundle from the store.
 */
export const groupsFile = '.groups';

export const bundleGroups = (dir: string): string[] => {
  try {
    return [...new Set(readFileSync(join(dir, groupsFile), 'utf8').split('\n').filter(Boolean))];
  } catch {
    return [];
  }
};

export const recordGroup = (dir: string, groupId: string): void => {
  if (bundleGroups(dir).includes(groupId)) return;
  mkdirSync(dir, { recursive: true });
  appendFileSync(join(dir, groupsFile), `${groupId}\n`);
};
