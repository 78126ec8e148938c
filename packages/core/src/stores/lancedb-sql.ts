import { GROUPS_COLUMN } from './lancedb-schema.ts';

/** A string literal in LanceDB's SQL (DataFusion). */
export function sqlString(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

/** Public rows (null or empty `groups`) and rows sharing a group with the caller. */
export function visibilityWhere(visibleGroups: readonly string[]): string {
  const isPublic = `${GROUPS_COLUMN} IS NULL OR array_length(${GROUPS_COLUMN}) = 0`;
  return visibleGroups.length === 0 ? isPublic : `${isPublic} OR array_has_any(${GROUPS_COLUMN}, ${groupsSql(visibleGroups)})`;
}

/** A List(Utf8) literal; make_array() alone has no element type, hence the cast for an empty list. */
export function groupsSql(groups: readonly string[]): string {
  return groups.length === 0 ? "arrow_cast(make_array(), 'List(Utf8)')" : `make_array(${groups.map(sqlString).join(', ')})`;
}
