import { existsSync, statSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import type { PretrainedModelOptions } from '@huggingface/transformers';

/** Shared by the local ONNX embedder, the cross-encoder and Model2Vec: where a model comes from and how it loads. */

const LOCAL_LAYOUT = 'config.json, tokenizer.json, tokenizer_config.json and onnx/model.onnx';


export interface ModelSource {
  /** What transformers.js is given: an absolute directory, or the hub id. */
  path: string;
  kind: 'directory' | 'hub';
  allowRemote: boolean;
  cacheDir: string | undefined;
  loadOptions: PretrainedModelOptions;
}

/**
 * A directory that exists loads with downloads disabled; anything else shaped like a path is an error now
 * (not a confusing hub lookup later); the rest is a hub id, fetched into cacheDir unless allowRemote is false.
 */
export function resolveModelSource(options: { model: string; cacheDir?: string; allowRemote?: boolean }): ModelSource {
  const { model, cacheDir } = options;
  const allowRemote = options.allowRemote ?? true;
  const directory = resolve(model);
  if (isDirectory(directory)) {
    // An absolute path, because transformers.js reads a relative one that looks like a hub id under env.localModelPath.
    return { path: directory, kind: 'directory', allowRemote: false, cacheDir, loadOptions: baseLoadOptions(true, cacheDir) };
  }
  if (looksLikePath(model)) {
    throw new Error(
      `Model directory "${directory}" does not exist. Set the model to a directory holding ${LOCAL_LAYOUT}, or to a Hugging Face Hub id such as Xenova/bge-small-en-v1.5.`,
    );
  }
  return { path: model, kind: 'hub', allowRemote, cacheDir, loadOptions: baseLoadOptions(!allowRemote, cacheDir) };
}

/** Turns a transformers.js failure into a message that says what went wrong and how to run offline. */
export function modelLoadError(source: ModelSource, cause: unknown): Error {
  const detail = describeCause(cause);
  const cache = source.cacheDir ? `the cache directory "${source.cacheDir}"` : "transformers.js' default cache directory";
  const offline = `To run without internet access, download the model once where the Hugging Face Hub is reachable (it is kept in ${cache}), or set the model to a local directory holding ${LOCAL_LAYOUT} (for example one saved with huggingface-cli download).`;
  if (source.kind === 'directory') {
    return new Error(`Could not load the local model in "${source.path}": ${detail}. The directory must hold ${LOCAL_LAYOUT}.`, { cause });
  }
  if (!source.allowRemote) {
    return new Error(`Model "${source.path}" is not in ${cache} and downloading is disabled (allowRemote: false): ${detail}. ${offline}`, { cause });
  }
  return new Error(`Could not download model "${source.path}" from the Hugging Face Hub: ${detail}. ${offline}`, { cause });
}

/** Runs `load` once; concurrent callers share the promise, and a failure is forgotten so a later call can retry. */
export function loadOnce<T>(load: () => Promise<T>): () => Promise<T> {
  let pending: Promise<T> | undefined;
  return () => {
    pending ??= load().catch((error: unknown) => {
      pending = undefined;
      throw error;
    });
    return pending;
  };
}


export function positiveInteger(value: number, name: string): number {
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, got ${value}.`);
  return value;
}

function baseLoadOptions(localOnly: boolean, cacheDir: string | undefined): PretrainedModelOptions {
  return {
    local_files_only: localOnly,
    ...(cacheDir ? { cache_dir: cacheDir } : {}),
    device: 'cpu',
    dtype: 'fp32',
    // One thread per model: the service runs several models and requests on a 2-core machine, and
    // onnxruntime's default (one thread per core) oversubscribes it.
    session_options: { intraOpNumThreads: 1, interOpNumThreads: 1 },
  };
}

function isDirectory(path: string): boolean {
  return existsSync(path) && statSync(path).isDirectory();
}

function looksLikePath(model: string): boolean {
  return isAbsolute(model) || model.startsWith('.') || model.startsWith('~') || model.includes('\\') || model.split('/').length > 2;
}

function describeCause(cause: unknown): string {
  if (!(cause instanceof Error)) return String(cause);
  const message = cause.message.replace(/\.+$/, '');
  const code = (cause.cause as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? `${message} (${code})` : message;
}
