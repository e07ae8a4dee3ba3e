import type { Context } from 'hono';
import type { ArtifactHead } from '../store/case-artifacts.js';

/**
 * An artifact as the explorer sends it: always plain text under a sandbox policy, so an agent's HTML or SVG
 * never renders on this origin; `X-Artifact-Length` says how long the whole is when only a head is sent.
 */
export const artifactResponse = (c: Context, name: string, file: ArtifactHead, download: boolean): Response => {
  const safeName = name.replace(/[^\w.-]/g, '_');
  c.header('Content-Security-Policy', 'sandbox');
  c.header('Content-Disposition', `${download ? 'attachment' : 'inline'}; filename="${safeName}"`);
  c.header('X-Artifact-Length', String(file.length));
  return c.body(file.text, 200, { 'Content-Type': 'text/plain; charset=utf-8' });
};
