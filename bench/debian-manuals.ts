/**
 * The real published corpora of the benchmarks: Debian's documentation packages, downloaded with
 * `apt-get download` and unpacked with `dpkg -x` under .cache/corpora/debian/, each manual's HTML (or PDF)
 * folder moved to its own name. Nothing here is needed by `pnpm test` or `.ci/run`.
 *
 *   pnpm exec tsx bench/debian-manuals.ts [postgresql python django kernel r-manuals ...]
 *
 * prints each manual's folder; a manual already unpacked is reused (the package file it came from, with its version, is in <name>.version beside it).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repositoryRoot = fileURLToPath(new URL('../', import.meta.url));
export const DEBIAN_CORPORA = join(repositoryRoot, '.cache/corpora/debian');

export interface DebianManual {
  /** Folder name under DEBIAN_CORPORA, and the name benchmarks use. */
  name: string;
  /** The Debian package (bookworm). */
  debianPackage: string;
  /** The folder of the unpacked package that holds the manual's pages. */
  root: string;
  /** What the pages are written with. */
  generator: string;
}

/** The four HTML manuals of the real-documents issue (about 122k chunks together), and R's PDF manuals. */
export const DEBIAN_MANUALS: readonly DebianManual[] = [
  { name: 'postgresql', debianPackage: 'postgresql-doc-15', root: 'usr/share/doc/postgresql-doc-15/html', generator: 'DocBook XSL' },
  { name: 'python', debianPackage: 'python3.11-doc', root: 'usr/share/doc/python3.11/html', generator: 'Sphinx (pydoctheme)' },
  { name: 'django', debianPackage: 'python-django-doc', root: 'usr/share/doc/python-django-doc/html', generator: 'Sphinx (Django theme)' },
  { name: 'kernel', debianPackage: 'linux-doc-6.1', root: 'usr/share/doc/linux-doc-6.1/html', generator: 'Sphinx (Read the Docs theme)' },
  { name: 'r-manuals', debianPackage: 'r-doc-pdf', root: 'usr/share/R/doc/manual', generator: 'texinfo PDF (with outlines)' },
];

export const HTML_MANUALS = DEBIAN_MANUALS.filter((manual) => manual.name !== 'r-manuals').map((manual) => manual.name);

export function manualNamed(name: string): DebianManual {
  const manual = DEBIAN_MANUALS.find((candidate) => candidate.name === name);
  if (!manual) throw new Error(`no Debian manual named ${name}: one of ${DEBIAN_MANUALS.map((m) => m.name).join(', ')}`);
  return manual;
}

/** The manual's folder, downloading and unpacking its package the first time. */
export async function debianManual(name: string): Promise<string> {
  const manual = manualNamed(name);
  const folder = join(DEBIAN_CORPORA, manual.name);
  if (existsSync(`${folder}.version`)) return folder;
  const staging = await mkdtemp(join(DEBIAN_CORPORA, `.${manual.name}-`));
  try {
    execFileSync('apt-get', ['download', manual.debianPackage], { cwd: staging, stdio: ['ignore', 'ignore', 'inherit'] });
    const deb = readdirSync(staging).find((file) => file.endsWith('.deb'));
    if (!deb) throw new Error(`apt-get download ${manual.debianPackage} left no .deb`);
    execFileSync('dpkg', ['-x', deb, 'unpacked'], { cwd: staging, stdio: 'inherit' });
    await rm(folder, { recursive: true, force: true });
    await rename(join(staging, 'unpacked', manual.root), folder);
    // The package file name carries its version (name_version_arch.deb, the epoch's colon escaped).
    await writeFile(`${folder}.version`, `${decodeURIComponent(deb)}\n`);
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  return folder;
}

/** The package file each unpacked manual came from (its version), for a benchmark's report. */
export async function manualVersion(name: string): Promise<string> {
  return (await readFile(join(DEBIAN_CORPORA, `${name}.version`), 'utf8')).trim();
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await mkdir(DEBIAN_CORPORA, { recursive: true });
  const names = process.argv.slice(2);
  for (const name of names.length > 0 ? names : DEBIAN_MANUALS.map((manual) => manual.name)) {
    process.stdout.write(`${name}\t${await debianManual(name)}\n`);
  }
}
