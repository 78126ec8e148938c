import { createHash, timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { RagError } from '@rag/core';
import { parse, YAMLParseError } from 'yaml';
import { z } from 'zod';
import type { Caller } from './caller.ts';

/** Requests per minute of a key that does not set rate_limit_per_minute: ten a second, enough for a bot, a brake on a loop. */
export const DEFAULT_RATE_LIMIT_PER_MINUTE = 600;

const keyEntrySchema = z
  .object({
    // Names go to logs and metric labels: short, printable, no spaces.
    name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'expected 1 to 64 letters, digits, dots, dashes or underscores'),
    sha256: z
      .string()
      .regex(/^[0-9a-fA-F]{64}$/, 'expected the 64 hexadecimal characters of the key\'s SHA-256 (printf %s "$KEY" | sha256sum), not the key itself'),
    groups: z.array(z.string().trim().min(1, 'a group name cannot be empty'), {
      required_error: 'required: the document groups this key may read ([] for public documents only)',
    }),
    rate_limit_per_minute: z.number().int('expected an integer').min(1).max(1_000_000).optional(),
  })
  .strict();

const authFileSchema = z.object({ keys: z.array(keyEntrySchema).min(1, 'list at least one key') }).strict();

export interface ApiKey {
  name: string;
  groups: string[];
  ratePerMinute: number;
  hash: Buffer;
}

export interface ApiKeysOptions {
  /** The rate limit's window; one minute, shorter in tests only. */
  windowMs?: number;
}

/**
 * The keys of RAG_AUTH_FILE, stored as SHA-256 hashes. A presented key is hashed and compared with every
 * stored hash in constant time, all of them every time, so timing tells neither whether nor which key matched.
 */
export class ApiKeys {
  readonly windowMs: number;
  private readonly keys: ApiKey[];
  private readonly byName: Map<string, ApiKey>;

  constructor(keys: ApiKey[], options: ApiKeysOptions = {}) {
    this.keys = keys;
    this.byName = new Map(keys.map((key) => [key.name, key]));
    this.windowMs = options.windowMs ?? 60_000;
  }

  /** The caller a presented key identifies, or undefined when it matches none. */
  match(presentedKey: string): Caller | undefined {
    const digest = createHash('sha256').update(presentedKey, 'utf8').digest();
    let matched: ApiKey | undefined;
    for (const key of this.keys) {
      // No early exit: every hash is compared whatever matched before.
      const equal = timingSafeEqual(digest, key.hash);
      if (equal && matched === undefined) matched = key;
    }
    return matched && { name: matched.name, groups: [...matched.groups] };
  }

  /** Requests allowed per window to the key of this name. */
  limitOf(name: string): number {
    return this.byName.get(name)?.ratePerMinute ?? DEFAULT_RATE_LIMIT_PER_MINUTE;
  }

  get size(): number {
    return this.keys.length;
  }
}

/** The SHA-256 of a key as the file stores it: what `printf %s "$KEY" | sha256sum` prints. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** Reads and validates RAG_AUTH_FILE; any problem throws RAG_CONFIG_INVALID naming it, never echoing a hash. */
export async function loadApiKeys(path: string, options: ApiKeysOptions = {}): Promise<ApiKeys> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw invalid(path, `cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}).`);
  }
  return parseApiKeys(text, path, options);
}

export function parseApiKeys(text: string, path: string, options: ApiKeysOptions = {}): ApiKeys {
  let document: unknown;
  try {
    document = parse(text);
  } catch (error) {
    // The parser's own message quotes the offending line, which may hold a hash: give its position only.
    const position = error instanceof YAMLParseError && error.linePos ? ` at line ${error.linePos[0].line}, column ${error.linePos[0].col}` : '';
    throw invalid(path, `is not valid YAML${position}.`);
  }
  const parsed = authFileSchema.safeParse(document);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${describePath(issue.path, document)}: ${issue.message}`);
    throw invalid(path, `${problems.join('; ')}.`);
  }
  const keys = parsed.data.keys.map((entry) => ({
    name: entry.name,
    groups: entry.groups,
    ratePerMinute: entry.rate_limit_per_minute ?? DEFAULT_RATE_LIMIT_PER_MINUTE,
    hash: Buffer.from(entry.sha256, 'hex'),
  }));
  rejectDuplicates(keys, path);
  return new ApiKeys(keys, options);
}

/** Two keys with one name would share a rate limit and a log identity; two with one hash, a caller. */
function rejectDuplicates(keys: ApiKey[], path: string): void {
  keys.forEach((key, index) => {
    const earlier = keys.findIndex((other) => other.name === key.name);
    if (earlier < index) throw invalid(path, `keys[${index}] (${key.name}): the name is already used by keys[${earlier}].`);
    const sameHash = keys.findIndex((other) => other.hash.equals(key.hash));
    if (sameHash < index) throw invalid(path, `keys[${index}] (${key.name}): the same sha256 as keys[${sameHash}] (${keys[sameHash]!.name}); give every caller its own key.`);
  });
}

/** `keys.1.sha256` → `keys[1] (support-bot).sha256`: the index and the name, when the entry has a readable one. */
function describePath(path: Array<string | number>, document: unknown): string {
  const [root, index, ...rest] = path;
  if (root !== 'keys' || typeof index !== 'number') return path.join('.') || '(the file)';
  const entries = (document as { keys?: unknown[] }).keys;
  const name = (entries?.[index] as { name?: unknown } | undefined)?.name;
  const label = typeof name === 'string' && name.length <= 64 ? `keys[${index}] (${name})` : `keys[${index}]`;
  return [label, ...rest].join('.');
}

function invalid(path: string, problem: string): RagError {
  return new RagError('RAG_CONFIG_INVALID', `RAG_AUTH_FILE ${path} ${problem}`);
}
