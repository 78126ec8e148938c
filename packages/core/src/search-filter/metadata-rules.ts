import { lstat, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import picomatch from 'picomatch';
import { parse } from 'yaml';
import { z } from 'zod';
import { RagError } from '../errors.ts';

/** The file at a folder source's root that gives documents custom fields; it is never indexed itself. */
export const METADATA_FILE = '.rag-metadata.yaml';

const fieldValue = z.union([z.string(), z.number(), z.boolean()]).transform(String);

const metadataFileSchema = z
  .object({
    rules: z.array(
      z
        .object({
          path: z.string().trim().min(1, 'a rule needs a path glob'),
          fields: z.record(z.string().trim().min(1), fieldValue),
        })
        .strict(),
    ),
  })
  .strict();

interface Rule {
  fields: Record<string, string>;
  matches: (path: string) => boolean;
}

/**
 * The rules of a folder's `.rag-metadata.yaml`, read like `.rag-access.yaml` (access-rules.ts):
 *
 * ```yaml
 * rules:
 *   - path: "operator-manual/**"
 *     fields: {team: platform, tier: gold}
 * ```
 *
 * A document gets the fields of every rule whose glob matches its path (relative, `/`-separated); where two
 * rules set the same key, the later rule wins. A missing file means no custom fields; a file that cannot be
 * read or parsed stops the run (RAG_METADATA_FILE_INVALID) rather than indexing wrong metadata.
 */
export class MetadataRules {
  static readonly NONE = new MetadataRules([]);

  private constructor(private readonly rules: readonly Rule[]) {}

  static async load(folder: string): Promise<MetadataRules> {
    const path = join(folder, METADATA_FILE);
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT' && !(await exists(path))) return MetadataRules.NONE;
      throw new RagError('RAG_METADATA_FILE_INVALID', `(${path}: ${(error as Error).message})`, { cause: error });
    }
    return MetadataRules.parse(text, path);
  }

  static parse(text: string, origin = METADATA_FILE): MetadataRules {
    let document: unknown;
    try {
      document = parse(text);
    } catch (error) {
      throw new RagError('RAG_METADATA_FILE_INVALID', `(${origin}: ${(error as Error).message})`, { cause: error });
    }
    const parsed = metadataFileSchema.safeParse(document ?? { rules: [] });
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new RagError('RAG_METADATA_FILE_INVALID', `(${origin}: ${issue.path.join('.') || 'the file'}: ${issue.message})`);
    }
    return new MetadataRules(parsed.data.rules.map(({ path, fields }) => ({ fields, matches: picomatch(path, { dot: true }) })));
  }

  /** The custom fields of the document at `path` (relative, `/`-separated). */
  fieldsOf(path: string): Record<string, string> {
    return Object.assign({}, ...this.rules.filter((rule) => rule.matches(path)).map((rule) => rule.fields)) as Record<string, string>;
  }
}

async function exists(path: string): Promise<boolean> {
  return lstat(path).then(
    () => true,
    () => false,
  );
}
