/**
 * The real docling-serve (the pinned release of scripts/python/docling.txt), started on 127.0.0.1 on a
 * free port for one suite and stopped after it.
 *
 * CLI and settings: https://github.com/docling-project/docling-serve/blob/main/docs/configuration.md
 * (`docling-serve run --host --port`, DOCLING_SERVE_ENABLE_UI, DOCLING_SERVE_LOAD_MODELS_AT_BOOT,
 * DOCLING_SERVE_SCRATCH_PATH, DOCLING_SERVE_ENG_LOC_NUM_WORKERS, DOCLING_NUM_THREADS) and docling_serve/__main__.py; `GET /health` answers `{"status": "ok"}`
 * (docling_serve/app.py, HealthCheckResponse).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { freePort } from './free-ports.ts';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface DoclingServe {
  url: string;
  /** What the server printed so far, for a failing test's message. */
  output(): string;
  close(): Promise<void>;
}

/** Importing torch and docling on a busy 2-core runner takes tens of seconds; a hang must still end. */
const STARTUP_LIMIT_MS = 240_000;
const STOP_LIMIT_MS = 10_000;
const OUTPUT_KEPT_CHARS = 64_000;
/** `docling-serve` with docling-jobkit's eager PDF pipeline build deferred to the first PDF: see its docstring. */
const LAUNCHER = fileURLToPath(new URL('./docling-serve-launcher.py', import.meta.url));

/**
 * Starts docling-serve from the virtual environment of `python` and resolves once /health answers (which
 * needs no API key).
 * The machines running this reach no model hub: nothing may try to download weights. So models are not
 * loaded at boot, the hub libraries are offline (a pipeline that needs weights, PDF layout and OCR, fails
 * at once instead of waiting on the network), and the launcher builds the PDF pipeline only for a PDF.
 */
export async function startDoclingServe(python: string, options: { apiKey?: string } = {}): Promise<DoclingServe> {
  const port = await freePort();
  const scratch = await mkdtemp(join(tmpdir(), 'docling-serve-'));
  const child = spawn(python, [LAUNCHER, 'run', '--host', '127.0.0.1', '--port', String(port)], {
    // Its settings also read a `.env` of the working directory (docling_serve/settings.py): not the repository's.
    cwd: scratch,
    // DOCLING_SERVE_API_KEY: every API request then needs `X-Api-Key` (docling_serve/auth.py, APIKeyAuth).
    env: { ...process.env, ...offlineEnvironment(scratch), ...(options.apiKey ? { DOCLING_SERVE_API_KEY: options.apiKey } : {}) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (data: Buffer) => (output = (output + data.toString('utf8')).slice(-OUTPUT_KEPT_CHARS));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const url = `http://127.0.0.1:${port}`;
  const close = async () => {
    await stop(child);
    await rm(scratch, { recursive: true, force: true });
  };
  try {
    await waitForHealth(url, child, () => output);
  } catch (error) {
    await close();
    throw error;
  }
  return { url, output: () => output, close };
}

function offlineEnvironment(scratch: string): Record<string, string> {
  return {
    DOCLING_SERVE_ENABLE_UI: 'false',
    DOCLING_SERVE_LOAD_MODELS_AT_BOOT: 'false',
    DOCLING_SERVE_SCRATCH_PATH: join(scratch, 'results'),
    DOCLING_SERVE_ENABLE_REMOTE_SERVICES: 'false',
    // https://huggingface.co/docs/huggingface_hub/package_reference/environment_variables#hfhuboffline
    HF_HUB_OFFLINE: '1',
    TRANSFORMERS_OFFLINE: '1',
    HF_HOME: join(scratch, 'hf'),
    // One converter thread and one torch thread: the runner's cores are shared.
    DOCLING_SERVE_ENG_LOC_NUM_WORKERS: '1',
    DOCLING_NUM_THREADS: '1',
    OMP_NUM_THREADS: '1',
  };
}

async function waitForHealth(url: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + STARTUP_LIMIT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`docling-serve exited (${child.exitCode ?? child.signalCode}) before answering /health:\n${output().slice(-4000)}`);
    }
    const healthy = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2_000) })
      .then((response) => response.ok)
      .catch(() => false);
    if (healthy) return;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error(`docling-serve did not answer /health within ${STARTUP_LIMIT_MS / 1000} s:\n${output().slice(-4000)}`);
}

/** SIGTERM (uvicorn shuts down gracefully), then SIGKILL if it has not exited in time. */
async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_LIMIT_MS);
  await exited;
  clearTimeout(timer);
}
