import type { Table } from '@lancedb/lancedb';
import { isSameTable, type TableSnapshot } from './table-identity.ts';

/**
 * A second handle on the collection, pinned to one version with LanceDB's `checkout(version)`, a read-only
 * view of that version (https://docs.lancedb.com/tables/versioning; `Table.checkout` in
 * @lancedb/lancedb/dist/table.d.ts): what the search view is scanned from and what the dense leg searches,
 * so that both legs of a query read the same version while another process writes newer ones.
 */
export class PinnedTable {
  private pinned: { snapshot: TableSnapshot; table: Promise<Table> } | undefined;

  constructor(private readonly openTable: () => Promise<Table>) {}

  /** The handle at this snapshot: opened by the first caller that needs it, shared by the others. */
  at(snapshot: TableSnapshot): Promise<Table> {
    const pinned = this.pinned;
    if (pinned && isSameTable(pinned.snapshot, snapshot) && pinned.snapshot.version === snapshot.version) return pinned.table;
    // The handle it replaces is left to the garbage collector: queries still running on it must finish.
    const table = this.openTable().then(async (table) => {
      await table.checkout(snapshot.version);
      return table;
    });
    this.pinned = { snapshot: { ...snapshot }, table };
    return table;
  }

  close(): void {
    const pinned = this.pinned;
    this.pinned = undefined;
    pinned?.table.then((table) => table.close()).catch(() => undefined);
  }
}
