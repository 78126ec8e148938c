import type { PageBox } from '../domain.ts';

/**
 * One entry of a docling item's `prov`: docling_core's ProvenanceItem (types/doc/common/reference.py:
 * page_no, bbox, charspan), its bbox a BoundingBox (types/doc/base.py: l, t, r, b and coord_origin,
 * a CoordOrigin: TOPLEFT, the default, or BOTTOMLEFT).
 */
export interface DoclingProvenance {
  page_no?: unknown;
  bbox?: { l?: unknown; t?: unknown; r?: unknown; b?: unknown; coord_origin?: unknown } | null;
}

const ORIGINS: ReadonlySet<unknown> = new Set(['TOPLEFT', 'BOTTOMLEFT']);

/** The item's boxes, one per provenance entry with a page and a whole bbox; coordinates as docling gives them. */
export function boxesOf(provenance: readonly DoclingProvenance[] | null | undefined): PageBox[] {
  return (provenance ?? []).flatMap(({ page_no: page, bbox }) => {
    if (!Number.isInteger(page) || (page as number) < 1 || !bbox) return [];
    const { l, t, r, b } = bbox;
    if (![l, t, r, b].every((coordinate) => typeof coordinate === 'number' && Number.isFinite(coordinate))) return [];
    const origin = bbox.coord_origin ?? 'TOPLEFT';
    if (!ORIGINS.has(origin)) return [];
    return [{ page: page as number, l: l as number, t: t as number, r: r as number, b: b as number, origin: origin as PageBox['origin'] }];
  });
}
