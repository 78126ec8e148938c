/** The `<source> > <heading path>` line the Python pipeline puts before every chunk (and embeds with it). */
export function prefixChunkText(source: string, headingPath: string, text: string): string {
  const title = headingPath === '' ? source : `${source} > ${headingPath}`;
  return `${title}\n\n${text}`;
}
