import { RE2JS } from 're2js';

/**
 * A request's `filter.source` glob and `filter.title` pattern, compiled for RE2's engine (re2js), never for V8's
 * backtracking one: RE2 runs in time linear in the text for a given pattern (https://github.com/google/re2/wiki/WhyRE2),
 * so `*?*?*?…!` costs as much as any other pattern of its length instead of freezing the process. The translation
 * below writes no construct RE2 lacks (no lookaround, no backreference).
 */
export interface LinearPattern {
  matches(text: string): boolean;
}

/** `title` patterns: `*` any run of characters (slashes and line breaks included), `?` one, the rest literal, case-insensitive. */
export function compileTitlePattern(pattern: string): LinearPattern {
  const regex = [...pattern].map((character) => (character === '*' ? '.*' : character === '?' ? '.' : RE2JS.quote(character))).join('');
  return RE2JS.compile(regex, RE2JS.CASE_INSENSITIVE | RE2JS.DOTALL);
}

/**
 * `source` globs, picomatch's syntax with dotfiles matched (what access rules use): `*` a run within one folder, `?` one
 * character but `/`, `**` as a whole segment any number of folders (`docs/**` also matches `docs`), `[abc]` `[a-z]` `[!x]`,
 * `{a,b}` (nested too), `\` escapes, a leading `!` negates. Extglobs (`+(…)`, `@(…)`) are not supported: read literally.
 * Throws InvalidGlobError for a glob RE2 cannot compile (a class such as `[z-a]`).
 */
export function compileSourceGlob(glob: string): LinearPattern {
  const negated = glob.startsWith('!') && !glob.startsWith('!(');
  const body = negated ? glob.slice(1) : glob;
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(globRegex(body, 0, body.length).regex, RE2JS.DOTALL);
  } catch (error) {
    throw new InvalidGlobError(glob, error);
  }
  return negated ? { matches: (text) => !compiled.matches(text) } : compiled;
}

export class InvalidGlobError extends Error {
  constructor(glob: string, cause: unknown) {
    super(`not a valid glob: ${JSON.stringify(glob)}`, { cause });
  }
}

/** A glob made only of `**` segments matches every source: a filter on it is no filter. */
export function isMatchAllGlob(glob: string): boolean {
  return /^\*\*(?:\/\*\*)*$/.test(glob);
}

interface Translated {
  regex: string;
  /** Where the translation stopped: `end`, or a `,` / `}` of the enclosing brace group. */
  next: number;
}

/** Translates glob[start, end) until `end` or, inside a brace group (`inBraces`), its next top-level `,` or `}`. */
function globRegex(glob: string, start: number, end: number, inBraces = false): Translated {
  let regex = '';
  let index = start;
  while (index < end) {
    const character = glob[index]!;
    if (inBraces && (character === ',' || character === '}')) return { regex, next: index };
    if (character === '\\' && index + 1 < end) {
      regex += RE2JS.quote(glob[index + 1]!);
      index += 2;
    } else if (character === '*') {
      const globstar = globstarAt(glob, index, end);
      regex += globstar.regex;
      index = globstar.next;
    } else if (character === '/' && glob.startsWith('/**', index) && index + 3 === end && !inBraces) {
      regex += '(?:/.*)?';
      index = end;
    } else if (character === '?') {
      regex += '[^/]';
      index += 1;
    } else if (character === '[' && classEnd(glob, index, end) !== -1) {
      const close = classEnd(glob, index, end);
      regex += classRegex(glob.slice(index + 1, close));
      index = close + 1;
    } else if (character === '{' && braceEnd(glob, index, end) !== -1) {
      const group = braceGroup(glob, index, braceEnd(glob, index, end));
      regex += group.regex;
      index = group.next;
    } else {
      regex += RE2JS.quote(character);
      index += 1;
    }
  }
  return { regex, next: index };
}

/** `**` as a whole segment: `**∕` any folders (none too), a lone `**` anything; otherwise a star is one segment's run. */
function globstarAt(glob: string, index: number, end: number): Translated {
  let stars = index;
  while (stars < end && glob[stars] === '*') stars += 1;
  const wholeSegment = stars - index >= 2 && (index === 0 || glob[index - 1] === '/') && (stars === end || glob[stars] === '/' || glob[stars] === ',' || glob[stars] === '}');
  if (!wholeSegment) return { regex: '[^/]*', next: stars };
  if (glob[stars] === '/') return { regex: '(?:.*/)?', next: stars + 1 };
  return { regex: '.*', next: stars };
}

/** The index of the `]` closing the class that opens at `open`, or -1 (then `[` is literal). */
function classEnd(glob: string, open: number, end: number): number {
  let index = open + 1;
  if (glob[index] === '!' || glob[index] === '^') index += 1;
  if (glob[index] === ']') index += 1;
  for (; index < end; index += 1) {
    if (glob[index] === '\\') index += 1;
    else if (glob[index] === ']') return index;
  }
  return -1;
}

function classRegex(content: string): string {
  const negated = content.startsWith('!') || content.startsWith('^');
  const members = (negated ? content.slice(1) : content).replace(/\\(.)|([\\\]^[])/g, (_, escaped: string | undefined, special: string | undefined) => `\\${escaped ?? special}`);
  return negated ? `[^/${members}]` : `[${members}]`;
}

/** The index of the `}` closing the group at `open` when it holds a top-level `,`, or -1 (then `{` is literal). */
function braceEnd(glob: string, open: number, end: number): number {
  let depth = 0;
  let hasComma = false;
  for (let index = open; index < end; index += 1) {
    const character = glob[index];
    if (character === '\\') index += 1;
    else if (character === '{') depth += 1;
    else if (character === ',' && depth === 1) hasComma = true;
    else if (character === '}' && --depth === 0) return hasComma ? index : -1;
  }
  return -1;
}

function braceGroup(glob: string, open: number, close: number): Translated {
  const alternatives: string[] = [];
  let index = open + 1;
  for (;;) {
    const alternative = globRegex(glob, index, close, true);
    alternatives.push(alternative.regex);
    if (alternative.next >= close) break;
    index = alternative.next + 1;
  }
  return { regex: `(?:${alternatives.join('|')})`, next: close + 1 };
}
