import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Context } from 'hono';

/** The built front end (vite writes it to dist/web, beside this module's dist/server). */
export const webRoot = fileURLToPath(new URL('../web/', import.meta.url));

const types: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

/**
 * The SPA's files, read once at start. Assets are served only when their exact URL is in this manifest, so
 * no request path ever reaches the file system; anything else gets index.html, carrying the CSRF token.
 */
export const spa = (csrf: string) => {
  const assets = new Map<string, { body: Buffer; type: string }>();
  const assetDir = path.join(webRoot, 'assets');
  if (existsSync(assetDir)) {
    for (const name of readdirSync(assetDir)) {
      const type = types[path.extname(name)];
      if (type) assets.set(`/assets/${name}`, { body: readFileSync(path.join(assetDir, name)), type });
    }
  }
  const indexFile = path.join(webRoot, 'index.html');
  const index = existsSync(indexFile)
    ? readFileSync(indexFile, 'utf8').replace('__PROCTOR_CSRF__', csrf)
    : '<!doctype html><title>Proctor</title><p>The explorer front end is not built: run <code>npm run build</code>.';
  return (c: Context) => {
    const asset = assets.get(c.req.path);
    if (asset) {
      return c.body(new Uint8Array(asset.body), 200, {
        'Content-Type': asset.type,
        'Cache-Control': 'public, max-age=31536000, immutable',
      });
    }
    if (c.req.path.startsWith('/assets/')) return c.text('not found', 404);
    return c.html(index, 200, { 'Cache-Control': 'no-store' });
  };
};
