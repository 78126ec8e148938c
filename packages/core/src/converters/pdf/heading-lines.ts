import type { TextLine } from './page-lines.ts';

/** A page line, marked as a heading of `headingLevel` (1 the highest) when it is one. */
export interface MarkedLine extends TextLine {
  headingLevel?: number;
}
