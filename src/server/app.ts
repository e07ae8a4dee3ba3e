import { Hono } from 'hono';
import { type ApiDeps, api } from './api.js';
import { type Guard, guard } from './security.js';
import { spa } from './spa.js';

/** The explorer: its guard before everything, the JSON API, and the single-page app for every other GET. */
export const explorerApp = (deps: ApiDeps, g: Guard): Hono => {
  const app = new Hono();
  app.use(guard(g));
  app.route('/api/v1', api(deps));
  app.all('/api/*', (c) => c.json({ error: 'no such endpoint' }, 404));
  app.get('*', spa(g.csrf));
  return app;
};
