import { describe, expect, it } from 'vitest';
import { listeningAddress } from '../llm/llama-server.ts';

/** llama.cpp's server logs `init: listening on http://HOST:PORT` (tools/server/server.cpp) once its port is bound. */
describe("llama-server's listening address", () => {
  const line = '0.00.224.229 I srv          init: listening on http://127.0.0.1:38887\n';

  it('is read once the line holding it is whole, never from a piece that ends inside the port', () => {
    const cut = line.indexOf(':388') + 4;
    expect(listeningAddress(line.slice(0, cut))).toBeUndefined();
    expect(listeningAddress(line)).toBe('http://127.0.0.1:38887');
  });

  it('is never port 0, which a line written before the listener bound can show', () => {
    expect(listeningAddress(`main: model loaded, server is listening on http://127.0.0.1:0\n${line}`)).toBe('http://127.0.0.1:38887');
  });

  it('is the first one logged', () => {
    expect(listeningAddress(`main: model loaded, server is listening on http://127.0.0.1:1\n${line}`)).toBe('http://127.0.0.1:1');
  });
});
