import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';

const webFolder = new URL('../web/', import.meta.url);

/**
 * Only this origin: scripts come from /app.js (no inline script), and the page's one inline <style>
 * block is allowed by its hash, computed from the file served, so the two cannot drift apart.
 */
export function contentSecurityPolicy(page: string): string {
  // The HTML parser turns CR LF into LF before the browser hashes the element's text.
  const styles = [...page.replace(/\r\n?/g, '\n').matchAll(/<style>([\s\S]*?)<\/style>/g)].map(
    (match) => `'sha256-${createHash('sha256').update(match[1] ?? '').digest('base64')}'`,
  );
  return [
    "default-src 'self'",
    `style-src ${["'self'", ...styles].join(' ')}`,
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'self'",
  ].join('; ');
}

/** GET / (the page) and GET /app.js (its script), both read once, when the app is built. */
export function registerWebRoutes(app: FastifyInstance): void {
  const page = readFileSync(new URL('index.html', webFolder), 'utf8');
  const script = readFileSync(new URL('app.js', webFolder), 'utf8');
  const policy = contentSecurityPolicy(page);
  app.get('/', async (_request, reply) => {
    return reply
      .header('content-security-policy', policy)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .header('cache-control', 'no-cache')
      .type('text/html; charset=utf-8')
      .send(page);
  });
  app.get('/app.js', async (_request, reply) => {
    return reply
      .header('x-content-type-options', 'nosniff')
      .header('cache-control', 'no-cache')
      .type('text/javascript; charset=utf-8')
      .send(script);
  });
}
