import { errorCatalog } from './errors.ts';

/** One Markdown table row per error code, as docs/errors.md lists them. */
export function errorsPageRows(): string[] {
  return Object.entries(errorCatalog).map(([code, { status, message }]) => `| \`${code}\` | ${status} | ${message.replaceAll('|', '\\|')} |`);
}
