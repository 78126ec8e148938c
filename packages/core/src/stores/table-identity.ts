import { stat } from 'node:fs/promises';
import { readRecordedModel } from './model-lock-file.ts';

/** Which table, at which version, a search view reflects; `tableId` undefined for a table whose record predates it. */
export interface TableSnapshot {
  tableId: string | undefined;
  version: number;
}

export function isSameTable(a: TableSnapshot, b: TableSnapshot): boolean {
  return a.tableId === b.tableId;
}

/**
 * The id of the table now on disk under a collection's name, as its model record says. Version numbers
 * alone cannot tell a collection deleted and built again from the one a reader holds: the new table starts
 * again at version 1 and may reach the held version. Asked on every query, so the record is re-read only
 * when its file changed (it is replaced by a rename on every write: a new inode).
 */
export class RecordedTableId {
  private signature: string | undefined;
  private tableId: string | undefined;

  constructor(private readonly recordFile: string) {}

  async current(): Promise<string | undefined> {
    const info = await stat(this.recordFile, { bigint: true }).catch(() => undefined);
    const signature = info && `${info.ino}:${info.mtimeNs}:${info.size}`;
    if (signature === this.signature) return this.tableId;
    const recorded = await readRecordedModel(this.recordFile).catch(() => null);
    // Unreadable (written in place by an older release): the previous answer stands, asked again next time.
    if (recorded === null) return this.tableId;
    this.tableId = recorded?.tableId;
    this.signature = signature;
    return this.tableId;
  }
}
