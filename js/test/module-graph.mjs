// The static module graph of an ES module entry, for the browser-entry check (issue 28): every
// module reachable through `import … from`, `export … from`, `import '…'`, `import('…')` with a
// literal and `require('…')`, following relative specifiers. Returns what a browser cannot load
// without a bundler shim: `node:` specifiers, Node's built-in modules by bare name
// (`fs`, `fs/promises`, …) and any other bare specifier (a dependency the page would not have).
import { readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, relative, resolve } from 'node:path';

const SPECIFIERS = [
  /\bimport\s*(?:[\w$*{}\s,]+?\s*from\s*)?['"]([^'"\n]+)['"]/g,
  /\bexport\s*(?:\*|\{[^}]*\})\s*(?:as\s+[\w$]+\s*)?from\s*['"]([^'"\n]+)['"]/g,
  /\bimport\s*\(\s*['"]([^'"\n]+)['"]\s*\)/g,
  /\brequire\s*\(\s*['"]([^'"\n]+)['"]\s*\)/g,
];
const BUILTINS = new Set(builtinModules);

/** The modules reachable from `entry` (absolute paths, entry first). */
export function moduleGraph(entry) {
  const seen = new Map();
  const visit = (file) => {
    if (seen.has(file)) return;
    // Comments are not imports (api.mjs's header quotes an `export { … } from` form).
    const text = readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
    const specifiers = [...new Set(SPECIFIERS.flatMap((re) => [...text.matchAll(re)].map((m) => m[1])))];
    seen.set(file, specifiers);
    for (const s of specifiers) if (s.startsWith('./') || s.startsWith('../')) visit(resolve(dirname(file), s));
  };
  visit(resolve(entry));
  return seen;
}

/** `{ module, specifier, why }` for each import a browser cannot resolve; empty when clean. */
export function nodeOnlyImports(entry) {
  const found = [];
  const root = dirname(resolve(entry));
  for (const [file, specifiers] of moduleGraph(entry)) {
    for (const specifier of specifiers) {
      if (specifier.startsWith('./') || specifier.startsWith('../')) continue;
      const why = specifier.startsWith('node:') ? 'node: scheme'
        : BUILTINS.has(specifier) ? 'Node built-in' : 'bare specifier';
      found.push({ module: relative(root, file) || file, specifier, why });
    }
  }
  return found;
}
