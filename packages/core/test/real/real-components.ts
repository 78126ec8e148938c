/**
 * Where the real components of `pnpm test:real` live, and what a test does when one is missing.
 *
 * `pnpm test:real` (scripts/test-real.sh) installs every component first and sets RAG_REQUIRE_REAL=1:
 * there a missing component fails the test. Run directly (`pnpm exec vitest -c vitest.real.config.ts`)
 * without the components, a test skips and prints why.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

export const repositoryRoot = fileURLToPath(new URL('../../../../', import.meta.url));

/** True under `pnpm test:real`: a component that cannot be found is a failure, not a skip. */
export const realComponentsRequired = process.env.RAG_REQUIRE_REAL === '1';

/** The python of the virtual environment scripts/python-env.sh made for NAME, if it exists. */
export function venvPython(name: string): string | undefined {
  const python = join(repositoryRoot, '.cache', 'py', name, 'bin', 'python');
  return existsSync(python) ? python : undefined;
}

/** A model folder `pnpm models:fetch` filled, if it exists. */
export function fetchedModel(name: string): string | undefined {
  const folder = join(repositoryRoot, '.cache', 'models', name);
  return existsSync(join(folder, 'config.json')) ? folder : undefined;
}

/**
 * Why a suite skips, or undefined when it can run. Under `pnpm test:real` a missing component throws,
 * so the suite fails with the reason instead of skipping.
 */
export function realComponentSkipReason(suite: string, missing: string | undefined): string | undefined {
  if (missing === undefined) return undefined;
  const reason = `${suite}: skipped, ${missing} (run \`pnpm test:real\`, which installs it)`;
  if (realComponentsRequired) throw new Error(`${suite}: ${missing}; pnpm test:real must not skip it`);
  console.warn(reason);
  return reason;
}
