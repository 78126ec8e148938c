/**
 * The size of each image's final stage, measured without a container engine: the Dockerfile's runtime
 * stage is laid out as a file tree and counted. Its parts are
 *   - debian:bookworm-slim, rebuilt with `debootstrap --variant=minbase bookworm` and the paths the
 *     slim variant leaves out (apt caches and lists, docs, man pages, locales) removed;
 *   - the node binary of the image's Node.js (run this under scripts/with-image-node.sh, so that
 *     process.execPath is that binary, as the Dockerfile's build stage copies /usr/local/bin/node);
 *   - dist/ as `pnpm build` writes it, without the .map files (the Dockerfile deletes them).
 * Needs root and Debian's package mirror (debootstrap). `--write` replaces the "Image sizes" section
 * of bench/results.md.
 *
 *   scripts/with-image-node.sh pnpm exec tsx bench/image-size.ts [--write] [--rootfs DIR]
 */
import { execFileSync } from 'node:child_process';
import { lstat, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { buildAll, ENTRY_POINTS } from '../scripts/build.ts';
import { writeResultsSection } from './results-file.ts';

const SECTION = '## Image sizes';
/** What the slim variant of Debian's image does not carry (its dpkg path-excludes, and no apt state). */
const SLIM_EXCLUSIONS = ['var/cache/apt/archives', 'var/lib/apt/lists', 'usr/share/doc', 'usr/share/man', 'usr/share/info', 'usr/share/locale', 'usr/share/lintian'];

async function treeBytes(path: string): Promise<number> {
  const info = await lstat(path); // a link counts as itself, never as what it points to
  if (!info.isDirectory()) return info.isFile() ? info.size : 0;
  let total = 0;
  for (const entry of await readdir(path)) total += await treeBytes(join(path, entry));
  return total;
}

async function slimRootfs(given: string | undefined): Promise<string> {
  const rootfs = given ?? join(tmpdir(), 'rag-bookworm-minbase');
  if (!existsSync(join(rootfs, 'etc/debian_version'))) {
    execFileSync('debootstrap', ['--variant=minbase', 'bookworm', rootfs], { stdio: 'inherit' });
  }
  for (const excluded of SLIM_EXCLUSIONS) await rm(join(rootfs, excluded), { recursive: true, force: true });
  return rootfs;
}

async function removeSourceMaps(folder: string): Promise<void> {
  for (const entry of await readdir(folder, { recursive: true })) if (entry.endsWith('.map')) await rm(join(folder, entry));
}

const mb = (bytes: number) => (bytes / 1e6).toFixed(1);

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { write: { type: 'boolean', default: false }, rootfs: { type: 'string' } } });
  const work = await mkdtemp(join(tmpdir(), 'rag-image-size-'));
  try {
    const base = await treeBytes(await slimRootfs(values.rootfs));
    const node = (await stat(process.execPath)).size;
    const dist = join(work, 'dist');
    await buildAll(dist);
    await removeSourceMaps(dist);
    const webPage = await treeBytes(join(dist, 'web'));
    const rows = [];
    for (const entry of ENTRY_POINTS) {
      // What the Dockerfile copies into each target: its own bundle folder, and the web page for the API.
      const app = (await treeBytes(join(dist, entry.folder))) + (entry.folder === 'retrieval' ? webPage : 0);
      rows.push(`| ${entry.folder} | ${mb(base)} | ${mb(node)} | ${mb(app)} | **${mb(base + node + app)}** |`);
    }
    const section = `${SECTION}

\`scripts/with-image-node.sh pnpm exec tsx bench/image-size.ts --write\`: each image's final stage laid out as a file tree and counted (no container engine here). The base is debian:bookworm-slim rebuilt with \`debootstrap --variant=minbase bookworm\` less what the slim variant leaves out (${mb(base)} MB; Docker Hub lists the slim image at about 75 MB); node is the ${process.version} binary the build stage copies; the app is dist/ without source maps. MB = 10^6 bytes, uncompressed.

| image | Debian slim | node ${process.version} | app | total |
| --- | --- | --- | --- | --- |
${rows.join('\n')}

No node_modules: the bundles hold their dependencies, and the embedded adapters' native packages are not in the images.
`;
    process.stdout.write(section);
    if (values.write) await writeResultsSection(SECTION, section);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

await main();
