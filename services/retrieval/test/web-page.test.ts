import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readJson, startTestStack, type TestStack } from './test-stack.ts';

let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack();
});

afterAll(async () => {
  await stack.close();
});

/** The directives of a Content-Security-Policy header, by name. */
function directives(policy: string): Map<string, string[]> {
  return new Map(
    policy
      .split(';')
      .map((part) => part.trim().split(/\s+/))
      .filter((words) => words[0])
      .map(([name, ...values]) => [name!, values]),
  );
}

describe('GET / (the web page)', () => {
  it('serves the page as UTF-8 HTML with a same-origin Content-Security-Policy', async () => {
    const response = await fetch(`${stack.baseUrl}/`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const page = await response.text();
    expect(page).toMatch(/^<!doctype html>/i);
    expect(page).toContain('<label for="question">');
    expect(page).toContain('aria-live="polite"');
    expect(page).toContain('<script src="/app.js"></script>');
    // Nothing inline may run: the only script is the separate file.
    expect(page).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/);
    expect(page).not.toMatch(/\son[a-z]+=/);

    const policy = directives(response.headers.get('content-security-policy') ?? '');
    expect(policy.get('default-src')).toEqual(["'self'"]);
    expect(policy.has('script-src')).toBe(false); // falls back to default-src 'self'
    expect(policy.has('connect-src')).toBe(false);
    // style-src: 'self' and the hash of the page's inline <style> block, nothing broader.
    const style = page.match(/<style>([\s\S]*?)<\/style>/)?.[1] ?? '';
    const hash = `'sha256-${createHash('sha256').update(style).digest('base64')}'`;
    expect(policy.get('style-src')).toEqual(["'self'", hash]);
    expect(response.headers.get('content-security-policy')).not.toMatch(/unsafe|\*|https?:|data:/);
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('answers HEAD / like GET / without a body', async () => {
    const response = await fetch(`${stack.baseUrl}/`, { method: 'HEAD' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await response.text()).toBe('');
  });

  it('serves the script as JavaScript, which never writes API data as HTML', async () => {
    const response = await fetch(`${stack.baseUrl}/app.js`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    const script = await response.text();
    expect(script).toContain("fetch(path, {");
    expect(script).toContain('textContent');
    expect(script).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(/);
    expect(() => new Function(script)).not.toThrow(); // parses
  });

  it.each(['/index.html', '/app.css', '/web/app.js', '/nope'])('still answers an unknown path (%s) with a 404 JSON error', async (path) => {
    const response = await fetch(`${stack.baseUrl}${path}`);
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toContain('application/json');
    expect(await readJson(response)).toMatchObject({ error: { code: 'RAG_NOT_FOUND' } });
  });

  it('does not serve the page for POST /: 405, GET and HEAD allowed', async () => {
    const response = await fetch(`${stack.baseUrl}/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, HEAD');
    expect(await readJson(response)).toMatchObject({ error: { code: 'RAG_METHOD_NOT_ALLOWED' } });
  });
});
