/**
 * The compiled server in a child process, as the scale benchmarks drive it: the address it prints, the first
 * 200 after its start, one /search, and its exit.
 */
import type { ChildProcess } from 'node:child_process';

export const POLL_MS = 50;
const START_TIMEOUT_MS = 300_000;

/** The address the server prints once it listens (`listening on http://127.0.0.1:PORT`). */
export function listeningUrl(child: ChildProcess, log: () => string): Promise<string> {
  let output = '';
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (part: Buffer) => {
      output += part.toString();
      const url = /listening on (http:\/\/[\d.]+:\d+)/.exec(output)?.[1];
      if (url) resolve(url);
    });
    child.once('exit', (code) => reject(new Error(`the server exited ${code} before listening: ${output}\n${log()}`)));
  });
}

export function postSearch(url: string, query: string): Promise<Response> {
  return fetch(`${url}/search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query }) });
}

/** Seconds from `started` until `request` answers 200, trying every POLL_MS; a 503 (still loading) or a refused connection is "not yet". */
export async function untilOk(request: () => Promise<Response>, started: number): Promise<number> {
  for (;;) {
    const response = await request().catch(() => undefined);
    if (response?.status === 200) {
      await response.arrayBuffer();
      return (performance.now() - started) / 1000;
    }
    if (response && response.status !== 503) throw new Error(`${response.url} answered ${response.status}: ${await response.text()}`);
    await response?.arrayBuffer();
    if (performance.now() - started > START_TIMEOUT_MS) throw new Error(`no 200 within ${START_TIMEOUT_MS / 1000} s of the start`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** One POST /search, read whole; anything but 200 fails the benchmark. */
export async function search(url: string, query: string): Promise<void> {
  const response = await postSearch(url, query);
  if (response.status !== 200) throw new Error(`POST /search answered ${response.status}: ${await response.text()}`);
  await response.arrayBuffer();
}

/** The child's exit code and signal, once it has exited. */
export function exitOf(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve({ code: child.exitCode, signal: child.signalCode });
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
}
