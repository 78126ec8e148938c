import { describe, expect, it } from 'vitest';
import { documentLead } from '../../src/index.ts';

describe('documentLead (CONTEXT_MODE=lead)', () => {
  it('is the title and the first prose sentence, skipping code, lists and badges', () => {
    const markdown = '# Backups\n\n[![ci](badge.svg)](ci)\n\n```bash\nrestic snapshots\n```\n\n- a list item.\n\nNightly snapshots are kept for **thirty days**. Older ones go.\n';
    expect(documentLead(markdown, 'handbook/backups.md')).toBe('Backups: Nightly snapshots are kept for thirty days.');
  });

  it('prefers front matter, and falls back to the file name without a heading', () => {
    expect(documentLead('---\ntitle: "Quotas"\ndescription: Limits per team.\n---\n# Other\n\nBody.\n', 'q.md')).toBe('Quotas: Limits per team.');
    expect(documentLead('Just one line of text without an ending', 'notes/on-call.md')).toBe('on-call: Just one line of text without an ending');
  });
});
