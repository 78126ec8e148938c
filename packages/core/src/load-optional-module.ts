import { RagError } from './errors.ts';

/**
 * Imports an adapter that needs packages the production images leave out (LanceDB, ONNX Runtime,
 * transformers.js). A missing package becomes RAG_ADAPTER_NOT_INSTALLED naming what asked for it,
 * instead of a module-resolution stack trace.
 */
export async function loadOptionalModule<T>(load: () => Promise<T>, purpose: string): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if (!isModuleNotFound(error)) throw error;
    const missing = /'([^']+)'/.exec((error as Error).message)?.[1] ?? 'a package';
    throw new RagError('RAG_ADAPTER_NOT_INSTALLED', `${purpose} needs ${missing}, which this installation does not carry.`, { cause: error });
  }
}

function isModuleNotFound(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND';
}
