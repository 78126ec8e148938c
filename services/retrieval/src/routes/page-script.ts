import { readFileSync } from 'node:fs';

/**
 * The web page's one script, joined from the ES modules of the web folder: GET /app.js serves it as a
 * classic script, since the page's policy and the API's open routes admit that one file (a separate
 * request per module would need each to be an open route, and no bundler ships in the images).
 *
 * Each module keeps its own scope: it becomes a function returning its exports, and each
 * `import { a, b } from './x.js'` becomes `const { a, b } = modules['x.js']`, after x.js has run. Only
 * that subset of module syntax is accepted (named imports from a sibling, `export` before a declaration);
 * anything else fails here, when the app is built, rather than in a browser.
 */
const IMPORT = /^import\s*\{([^}]*)\}\s*from\s*'\.\/([a-z][a-z0-9-]*\.js)';[ \t]*$/gm;
const EXPORT = /^export\s+(?:async\s+)?(?:function\*?|const|let|class)\s+([A-Za-z_$][\w$]*)/gm;

interface PageModule {
  name: string;
  imports: Array<{ from: string; names: string }>;
  exports: string[];
  body: string;
}

function parseModule(name: string, source: string): PageModule {
  const imports = [...source.matchAll(IMPORT)].map((match) => ({ from: match[2]!, names: match[1]!.replace(/\s+as\s+/g, ': ').trim() }));
  const exports = [...source.matchAll(EXPORT)].map((match) => match[1]!);
  const body = source.replace(IMPORT, '').replace(/^export\s+(?=(?:async\s+)?(?:function|const|let|class)\b)/gm, '');
  const left = /^\s*(?:import|export)\b/m.exec(body);
  if (left) throw new Error(`web/${name}: only "import { … } from './x.js'" and "export <declaration>" are supported (found: ${body.slice(left.index).trim().split('\n')[0]})`);
  return { name, imports, exports, body };
}

/** The script of `entry` and every module it imports, each once, dependencies first. */
export function joinPageModules(folder: URL, entry: string): string {
  const ordered: PageModule[] = [];
  const visiting = new Set<string>();
  const visit = (name: string): void => {
    if (ordered.some((module) => module.name === name)) return;
    if (visiting.has(name)) throw new Error(`web/${name}: circular import`);
    visiting.add(name);
    const module = parseModule(name, readFileSync(new URL(name, folder), 'utf8'));
    for (const { from } of module.imports) visit(from);
    ordered.push(module);
  };
  visit(entry);
  const parts = ordered.map((module) => {
    const imports = module.imports.map(({ from, names }) => `const { ${names} } = modules[${JSON.stringify(from)}];\n`).join('');
    return `// ${module.name}\nmodules[${JSON.stringify(module.name)}] = (function () {\n'use strict';\n${imports}${module.body}\nreturn { ${module.exports.join(', ')} };\n})();\n`;
  });
  return `(function () {\nconst modules = {};\n${parts.join('\n')}})();\n`;
}
