import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, sep } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { joinPageModules } from './page-script.ts';

const webFolder = new URL('../web/', import.meta.url);

/**
 * The browser builds of the page's two libraries, served from this origin (the policy allows no other):
 * route → package and file. `pnpm build` copies them to dist/web/vendor/, since the images have no node_modules.
 */
export const VENDOR_FILES: Readonly<Record<string, { packageName: string; file: string }>> = {
  'purify.js': { packageName: 'dompurify', file: 'dist/purify.min.js' },
  'marked.js': { packageName: 'marked', file: 'lib/marked.umd.js' },
};

/** The file's path in the installed package: its `exports` list neither the browser build nor package.json. */
export function vendorFilePath(require: NodeJS.Require, vendor: { packageName: string; file: string }): string {
  const entry = require.resolve(vendor.packageName);
  const root = `${sep}node_modules${sep}${vendor.packageName}${sep}`;
  return join(entry.slice(0, entry.lastIndexOf(root) + root.length), vendor.file);
}

function readVendorFile(name: string, vendor: { packageName: string; file: string }): string {
  const copied = new URL(`vendor/${name}`, webFolder);
  if (existsSync(copied)) return readFileSync(copied, 'utf8');
  return readFileSync(vendorFilePath(createRequire(import.meta.url), vendor), 'utf8');
}

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

/** GET / (the page) and GET /app.js (its script, joined from web/app.js and its modules), both read once, when the app is built. */
export function registerWebRoutes(app: FastifyInstance): void {
  const page = readFileSync(new URL('index.html', webFolder), 'utf8');
  const script = joinPageModules(webFolder, 'app.js');
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
  for (const [name, packageFile] of Object.entries(VENDOR_FILES)) {
    const library = readVendorFile(name, packageFile);
    app.get(`/vendor/${name}`, async (_request, reply) => {
      return reply.header('x-content-type-options', 'nosniff').header('cache-control', 'no-cache').type('text/javascript; charset=utf-8').send(library);
    });
  }
}
