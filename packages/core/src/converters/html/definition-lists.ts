import { childElements, type Element, elementsIn } from './html-dom.ts';
import type { TextMeasure } from './text-measure.ts';

/** One entry of a definition list: its terms (aliases, overloads) and their descriptions. */
export interface DefinitionEntry {
  terms: Element[];
  descriptions: Element[];
}

/**
 * A definition list this long (characters of text) is a reference section, not a short gloss: each entry
 * becomes a section headed by its term, so a query for the term finds the entry by its heading path
 * (a PostgreSQL parameter among twenty in a section, an option of a man page, a glossary's words).
 */
const SECTIONED_LIST_TEXT = 1000;
/** Terms of one entry (aliases, a function's overloads) that still make one heading. */
const MAX_TERMS = 4;

/** The list's entries in order; `div` groups (allowed by HTML around dt/dd pairs) are looked into. */
export function definitionEntries(list: Element): DefinitionEntry[] {
  const entries: DefinitionEntry[] = [];
  for (const child of itemsOf(list)) {
    const last = entries.at(-1);
    if (child.name === 'dt') {
      if (last && last.descriptions.length === 0) last.terms.push(child);
      else entries.push({ terms: [child], descriptions: [] });
    } else if (child.name === 'dd') {
      if (last) last.descriptions.push(child);
      else entries.push({ terms: [], descriptions: [child] });
    }
  }
  return entries;
}

function itemsOf(list: Element): Element[] {
  return childElements(list).flatMap((child) => (child.name === 'div' ? childElements(child) : [child]));
}

/**
 * Entries become sections when the list is long, or when its terms are link targets (an id on the term
 * or an anchor in it: other pages link to the entry, as to an API object's description).
 */
export function entriesAsSections(list: Element, entries: readonly DefinitionEntry[], measure: TextMeasure): boolean {
  // An entry without a description, or with a run of terms, is an index's or a glossary's list of names: no sections.
  if (entries.length === 0 || entries.some((entry) => entry.terms.length === 0 || entry.terms.length > MAX_TERMS || entry.descriptions.length === 0)) return false;
  if (measure.of(list).text >= SECTIONED_LIST_TEXT && entries.length >= 2) return true;
  return entries.every((entry) => entry.terms.some(isLinkTarget));
}

function isLinkTarget(term: Element): boolean {
  for (const element of elementsIn(term)) if (element.attribs.id !== undefined || (element.name === 'a' && element.attribs.name !== undefined)) return true;
  return false;
}
