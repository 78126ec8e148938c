import { lstat, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import picomatch from 'picomatch';
import { parse } from 'yaml';
import { z } from 'zod';
import { RagError } from '../errors.ts';
import { normalizeGroups } from './groups.ts';

/** The file at a folder source's root that restricts documents to groups; it is never indexed itself. */
export const ACCESS_FILE = '.rag-access.yaml';

/** Names meant as the access file but never read as one: `.rag-access.yml`, `rag-access.yaml`, `.RAG-Access.yaml`, `.rag_access.yaml`. */
const LOOK_ALIKE = /^\.?rag[-_.]?access\.ya?ml$/i;

/**
 * Whether a file named `name` in `folder` would be taken for access rules that are not applied: a
 * look-alike of ACCESS_FILE anywhere, or ACCESS_FILE itself anywhere but the root. Either would leave
 * the documents it was meant to restrict public, so the folder source refuses to list (fail closed).
 */
export function isIgnoredAccessFile(name: string, atRoot: boolean): boolean {
  return LOOK_ALIKE.test(name) && !(atRoot && name === ACCESS_FILE);
}

const accessFileSchema = z
  .object({
    rules: z.array(
      z
        .object({
          path: z.string().trim().min(1, 'a rule needs a path glob'),
          groups: z
            .array(z.string())
            .transform(normalizeGroups)
            .refine((groups) => groups.length > 0, 'a rule needs at least one group (a document no rule matches is public already)'),
        })
        .strict(),
    ),
  })
  .strict();

interface Rule {
  path: string;
  groups: string[];
  matches: (path: string) => boolean;
}

/**
 * The rules of a folder's `.rag-access.yaml`:
 *
 * ```yaml
 * rules:
 *   - path: "hr/**"
 *     groups: [hr]
 * ```
 *
 * A document gets the union of the groups of every rule whose glob matches its path (relative to the
 * folder, with `/`); a document no rule matches is public. Rules only ever restrict: their order does
 * not matter, and no rule can make a document that another rule restricts public again, so a broad rule
 * added later never exposes the HR folder. A rule therefore needs at least one group.
 *
 * A missing file means every document is public (`present` false: the ingest then refuses to make
 * public a document the index holds as restricted, RAG_ACCESS_WOULD_PUBLISH); a file that cannot be
 * read or parsed, for any reason but not existing, stops the run (RAG_ACCESS_FILE_INVALID) rather than
 * indexing restricted documents as public.
 */
export class AccessRules {
  static readonly NONE = new AccessRules([], false);

  private constructor(
    private readonly rules: readonly Rule[],
    /** Whether the rules come from an access file; NONE, for a folder without one, is not. */
    readonly present: boolean,
  ) {}

  static async load(folder: string): Promise<AccessRules> {
    let text: string;
    try {
      text = await readFile(join(folder, ACCESS_FILE), 'utf8');
    } catch (error) {
      // Absent means absent: a link to nowhere is an access file that cannot be read.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT' && !(await exists(join(folder, ACCESS_FILE)))) return AccessRules.NONE;
      throw new RagError('RAG_ACCESS_FILE_INVALID', `(${join(folder, ACCESS_FILE)}: ${(error as Error).message})`, { cause: error });
    }
    return AccessRules.parse(text, join(folder, ACCESS_FILE));
  }

  static parse(text: string, origin = ACCESS_FILE): AccessRules {
    let document: unknown;
    try {
      document = parse(text);
    } catch (error) {
      throw new RagError('RAG_ACCESS_FILE_INVALID', `(${origin}: ${(error as Error).message})`, { cause: error });
    }
    const parsed = accessFileSchema.safeParse(document);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new RagError('RAG_ACCESS_FILE_INVALID', `(${origin}: ${issue.path.join('.') || 'the file'}: ${issue.message})`);
    }
    // dot: a glob such as `hr/**` covers hr/.drafts/x.md as well; a rule must never miss a file by its name.
    return new AccessRules(
      parsed.data.rules.map(({ path, groups }) => ({ path, groups, matches: picomatch(path, { dot: true }) })),
      true,
    );
  }

  get size(): number {
    return this.rules.length;
  }

  /** The groups allowed to read the document at `path` (relative, `/`-separated); empty: public. */
  groupsOf(path: string): string[] {
    return normalizeGroups(this.rules.filter((rule) => rule.matches(path)).flatMap((rule) => rule.groups));
  }
}

/** Whether anything, a dangling link included, is at `path`. */
async function exists(path: string): Promise<boolean> {
  return lstat(path).then(
    () => true,
    () => false,
  );
}
