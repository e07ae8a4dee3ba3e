import { timingSafeEqual } from 'node:crypto';
import { hostname, networkInterfaces } from 'node:os';
import type { MiddlewareHandler } from 'hono';
import { getCookie } from 'hono/cookie';

/** Who may talk to the server: the names it answers to, its optional token and its per-process CSRF token. */
export interface Guard {
  /** Exact `Host` header values accepted (lower case, with port). */
  hosts: ReadonlySet<string>;
  token?: string;
  csrf: string;
}

export const tokenCookie = 'proctor_token';

const loopbackNames = ['127.0.0.1', 'localhost', '[::1]'];

export const isLoopback = (host: string): boolean => host === '::1' || loopbackNames.includes(host);

const wildcards = ['0.0.0.0', '::'];

/**
 * The Host values a server bound to `host`:`port` answers to: its loopback names and the bound name; bound to
 * every interface, also this machine's name and each interface's address (what other machines will type).
 */
export const allowedHosts = (host: string, port: number): Set<string> => {
  const names = new Set(loopbackNames);
  const add = (name: string) => names.add(name.includes(':') ? `[${name}]` : name);
  if (!isLoopback(host)) add(host);
  if (wildcards.includes(host)) {
    add(hostname());
    for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) add(a.address);
  }
  return new Set([...names].map((n) => `${n.toLowerCase()}:${port}`));
};

export const sameSecret = (given: string | undefined, expected: string): boolean => {
  if (given === undefined) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
};

const contentSecurityPolicy = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
  "form-action 'self'",
].join('; ');

/**
 * Everything a request must pass before routing. The Host check stops DNS rebinding (a loopback bind alone
 * does not); it compares whole values, never prefixes, so `127.0.0.1.evil.test` is foreign.
 */
export const guard =
  (g: Guard): MiddlewareHandler =>
  async (c, next) => {
    const host = c.req.header('host')?.toLowerCase();
    if (!host || !g.hosts.has(host)) return c.text('misdirected request: unknown Host', 421);
    if (g.token) {
      const handshake = c.req.query('token');
      if (c.req.method === 'GET' && handshake !== undefined && sameSecret(handshake, g.token)) {
        c.header('Set-Cookie', `${tokenCookie}=${g.token}; HttpOnly; SameSite=Strict; Path=/`);
        return c.redirect('/', 303);
      }
      const bearer = c.req.header('authorization')?.replace(/^Bearer /, '');
      if (!sameSecret(bearer, g.token) && !sameSecret(getCookie(c, tokenCookie), g.token))
        return c.text('unauthorized: pass the token (Authorization: Bearer T, or open /?token=T once)', 401);
    }
    if (c.req.method !== 'GET' && c.req.method !== 'HEAD') {
      const refused = mutationRefusal(g, c.req.header.bind(c.req));
      if (refused) return c.json({ error: refused.message }, refused.status);
    }
    await next();
    // An artifact sets its own, stricter policy (sandbox).
    if (!c.res.headers.has('Content-Security-Policy')) c.header('Content-Security-Policy', contentSecurityPolicy);
    c.header('X-Content-Type-Options', 'nosniff');
    c.header('Referrer-Policy', 'no-referrer');
    c.header('X-Frame-Options', 'DENY');
    c.header('Cross-Origin-Resource-Policy', 'same-origin');
  };

/**
 * Why a state-changing request is refused, if it is. A cross-site form can send only simple content types
 * (so JSON is required) and cannot set the CSRF header; a script on another origin fails CORS before it can.
 */
const mutationRefusal = (
  g: Guard,
  header: (name: string) => string | undefined,
): { status: 403 | 415; message: string } | undefined => {
  if (!header('content-type')?.toLowerCase().startsWith('application/json'))
    return { status: 415, message: 'send Content-Type: application/json' };
  const site = header('sec-fetch-site');
  if (site !== undefined && site !== 'same-origin' && site !== 'none')
    return { status: 403, message: `cross-site request refused (${site})` };
  const origin = header('origin');
  if (origin !== undefined && !g.hosts.has(origin.replace(/^http:\/\//, '').toLowerCase()))
    return { status: 403, message: 'foreign Origin refused' };
  if (!sameSecret(header('x-proctor-csrf'), g.csrf)) return { status: 403, message: 'missing or wrong CSRF token' };
  return undefined;
};
