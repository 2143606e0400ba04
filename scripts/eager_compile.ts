// Profile-guided eager compilation for Deno's start-up bundle (scripts/bundle.ts runs it on DIR/deno).
//
// Note [Eager functions in Deno's code cache]
// Deno keeps a V8 code cache per module, but writes it right after compiling the module, before it runs. V8 compiles
// a function's body only when the function is first called (lazily), unless the function is a parenthesized
// expression (`(function f() {...})`, `(() => ...)`), which its heuristics compile with the code around it. So every
// function a start calls is compiled again on every start, from source: about 380 for an import plus a first `add`,
// a third of the JavaScript time. 800 small top-level functions called once took 4.6 ms to evaluate as declarations
// and 0.24 ms as parenthesized expressions (Deno 2.9.5, cache warm), for 0.6 ms more loading.
// So the build runs a typical start (bundle.ts's workload) under Deno with V8's function-event log, takes the functions
// it compiled lazily, and rewrites those that are top-level function declarations of a chunk as parenthesized
// function expressions, hoisted to the top of the chunk: `var f = (function f(a) {...});` right after the imports.
// Hoisting keeps what a declaration guarantees: the function exists before any of the chunk's code runs (the chunks
// import each other without cycles, so no other chunk's code runs first either; the build checks it). Its name,
// length, body and `toString()` stay the same, and inside its body its name still means the function: TypeScript
// rejects assigning to a function declaration, so the sources never rebind one. Class methods and nested functions
// stay lazy: V8 has no such heuristic for methods, and a nested function would be compiled with its parent only when
// the parent first runs, not into the cache. Functions the workload never calls stay lazy too, so a program pays only
// for what a start is likely to run.

/** A function V8 compiled lazily: its source offsets in one script, from `(` of its parameters to after its body. */
export interface CompiledRange {
  readonly start: number;
  readonly end: number;
}

/**
 * The Deno argument that makes V8 write the function-event log {@linkcode lazilyCompiledFunctions} reads to `logPath`.
 *
 * @example
 * ```ts
 * functionEventLogFlag('/tmp/v8.log'); // '--v8-flags=--log-function-events,--logfile=/tmp/v8.log,--no-logfile-per-isolate'
 * ```
 */
export function functionEventLogFlag(logPath: string): string {
  return `--v8-flags=--log-function-events,--logfile=${logPath},--no-logfile-per-isolate`;
}

/**
 * The functions V8 compiled lazily, by script URL, read from a log written with
 * `--log-function-events --logfile=FILE --no-logfile-per-isolate` (its `script-details` and `parse-function` lines).
 *
 * @example
 * ```ts
 * const log = 'script-details,7,file:///b/chunk.js,0,0,\nfunction,parse-function,7,12,40,0.01,100,f\n';
 * lazilyCompiledFunctions(log).get('file:///b/chunk.js'); // [{ start: 12, end: 40 }]
 * ```
 */
export function lazilyCompiledFunctions(log: string): Map<string, CompiledRange[]> {
  const urls = new Map<string, string>();
  const byScript = new Map<string, CompiledRange[]>();
  for (const line of log.split('\n')) {
    const fields = line.split(',');
    if (fields[0] === 'script-details' && fields.length > 2) urls.set(fields[1], fields[2]);
    if (fields[0] === 'function' && fields[1] === 'parse-function' && fields.length > 4) {
      const start = Number(fields[3]), end = Number(fields[4]);
      if (!Number.isInteger(start) || !Number.isInteger(end) || end <= start) continue;
      const list = byScript.get(fields[2]) ?? [];
      list.push({ start, end });
      byScript.set(fields[2], list);
    }
  }
  const out = new Map<string, CompiledRange[]>();
  for (const [script, ranges] of byScript) {
    const url = urls.get(script);
    if (url !== undefined) out.set(url, [...(out.get(url) ?? []), ...ranges]);
  }
  return out;
}

/**
 * A cycle among ES module chunks' static imports (`import ... from "./x.js"`, `import "./x.js"`, `export ... from`),
 * as the file names along it, or undefined. Hoisting relies on there being none: a chunk's code then runs only after
 * every chunk it imports has run. Dynamic `import()` is not followed (it runs later). Text that merely looks like an
 * import can only add edges, so a misread reports a cycle rather than missing one.
 *
 * @example
 * ```ts
 * const chunks = new Map([['a.js', 'import{x}from"./b.js";'], ['b.js', 'export*from"./a.js";']]);
 * staticImportCycle(chunks); // ['a.js', 'b.js', 'a.js']
 * ```
 */
export function staticImportCycle(chunks: ReadonlyMap<string, string>): string[] | undefined {
  const edges = new Map<string, string[]>();
  for (const [file, source] of chunks) {
    const targets = [...source.matchAll(/\b(?:from|import)\s*["']\.\/([^"']+)["']/g)].map((m) => m[1]);
    edges.set(file, targets.filter((target) => chunks.has(target)));
  }
  const state = new Map<string, 'open' | 'done'>();
  const visit = (file: string, path: string[]): string[] | undefined => {
    if (state.get(file) === 'open') return [...path.slice(path.indexOf(file)), file];
    if (state.get(file) === 'done') return undefined;
    state.set(file, 'open');
    for (const next of edges.get(file)!) {
      const cycle = visit(next, [...path, file]);
      if (cycle !== undefined) return cycle;
    }
    state.set(file, 'done');
    return undefined;
  };
  for (const file of chunks.keys()) {
    const cycle = visit(file, []);
    if (cycle !== undefined) return cycle;
  }
  return undefined;
}

// Words after which `/` starts a regular expression; after any other word (an identifier) it divides.
const REGEX_AFTER_WORD = new Set([
  'return',
  'typeof',
  'instanceof',
  'in',
  'of',
  'new',
  'delete',
  'void',
  'throw',
  'case',
  'do',
  'else',
  'yield',
  'await',
]);

/**
 * The `{}` nesting depth of JavaScript `source` at each offset in `at` (offsets in code, not inside a string), counting
 * braces outside strings, template text, regular expressions and comments (a template's `${...}` is code). Throws
 * when the source does not end at depth 0 outside any literal: a sign the scanner misread it, which must not pass.
 *
 * @example
 * ```ts
 * const source = 'function f() { return `}${"{"}` } g();';
 * braceDepths(source, [source.indexOf('return'), source.indexOf('g(')]); // [1, 0]
 * ```
 */
export function braceDepths(source: string, at: readonly number[]): number[] {
  const order = at.map((_, i) => i).sort((a, b) => at[a] - at[b]);
  const out = new Array<number>(at.length).fill(-1);
  let next = 0, depth = 0, i = 0;
  const templates: number[] = []; // the depth at which each open `${` resumes its template
  // What precedes a `/`: a value (it divides), punctuation or nothing (a regular expression starts) or a word.
  let previous: 'value' | 'punctuation' | 'word' = 'punctuation';
  let previousWord = '', previousPunctuation = '';
  const fail = (what: string): never => {
    throw new Error(`eager_compile: ${what} at offset ${i}; the scanner misread the source`);
  };
  const skipTemplateText = () => {
    // From after a backtick or a closing `}` of a substitution to after the closing backtick or an opening `${`.
    for (;;) {
      if (i >= source.length) fail('unterminated template');
      const c = source[i];
      if (c === '\\') i += 2;
      else if (c === '`') return void i++;
      else if (c === '$' && source[i + 1] === '{') {
        templates.push(depth);
        i += 2;
        previous = 'punctuation';
        previousPunctuation = '{';
        return;
      } else i++;
    }
  };
  while (i < source.length) {
    while (next < order.length && at[order[next]] <= i) out[order[next++]] = depth;
    const c = source[i];
    if (c === '"' || c === "'") {
      let j = i + 1;
      while (j < source.length && source[j] !== c) {
        if (source[j] === '\n') fail('unterminated string');
        j += source[j] === '\\' ? 2 : 1;
      }
      if (j >= source.length) fail('unterminated string');
      i = j + 1;
      previous = 'value';
    } else if (c === '`') {
      i++;
      skipTemplateText();
      if (source[i - 1] === '`') previous = 'value';
    } else if (c === '}' && templates.length > 0 && templates[templates.length - 1] === depth) {
      templates.pop();
      i++;
      skipTemplateText();
      if (source[i - 1] === '`') previous = 'value';
    } else if (c === '/' && source[i + 1] === '/') {
      const end = source.indexOf('\n', i);
      i = end < 0 ? source.length : end;
    } else if (c === '/' && source[i + 1] === '*') {
      const end = source.indexOf('*/', i + 2);
      if (end < 0) fail('unterminated comment');
      i = end + 2;
    } else if (c === '/' && startsRegex(previous, previousWord, previousPunctuation)) {
      let j = i + 1, inClass = false;
      for (;; j++) {
        if (j >= source.length || source[j] === '\n') fail('unterminated regular expression');
        if (source[j] === '\\') j++;
        else if (source[j] === '[') inClass = true;
        else if (source[j] === ']') inClass = false;
        else if (source[j] === '/' && !inClass) break;
      }
      j++;
      while (j < source.length && /[\w$]/.test(source[j])) j++; // flags
      i = j;
      previous = 'value';
    } else if (/[\w$#\\]/.test(c) || c.charCodeAt(0) > 0x7f) {
      let j = i + 1;
      while (j < source.length && (/[\w$\\]/.test(source[j]) || source.charCodeAt(j) > 0x7f)) j++;
      const word = source.slice(i, j);
      if (/^[0-9.]/.test(word)) previous = 'value';
      else {
        previous = 'word';
        previousWord = word;
      }
      i = j;
    } else if (/\s/.test(c)) {
      i++;
    } else {
      if (c === '{') depth++;
      else if (c === '}' && --depth < 0) fail('unbalanced }');
      // `a++ / b` divides: remember a doubled + or - as one token.
      const doubled = (c === '+' || c === '-') && source[i + 1] === c;
      previous = c === ')' || c === ']' ? 'value' : 'punctuation';
      previousPunctuation = doubled ? c + c : c;
      i += doubled ? 2 : 1;
    }
  }
  while (next < order.length) out[order[next++]] = depth;
  if (depth !== 0 || templates.length > 0) fail(`end of source at depth ${depth}`);
  return out;
}

function startsRegex(previous: 'value' | 'punctuation' | 'word', word: string, punctuation: string): boolean {
  if (previous === 'value') return false;
  if (previous === 'word') return REGEX_AFTER_WORD.has(word);
  return punctuation !== '++' && punctuation !== '--';
}

// A top-level function declaration's head, ending where V8's range starts (its parameter list): the end of the
// statement before (`;` or `}`: after `}`, `function` cannot continue an expression), then `function NAME`, possibly
// async, possibly a generator. At the start of the source, the `;` is put in front of it (see hoistEagerly). A newline
// alone does not count: `x =\nfunction f() {}` is an expression.
const DECLARATION_HEAD = /[;}]\s*((?:async\s+)?function\s*(?:\*\s*)?([A-Za-z_$][\w$]*)\s*)$/;
// The import declarations an ES module chunk starts with (`import{a as b}from"./chunk-x.js";`, `import"./x.js";`).
const LEADING_IMPORT =
  /^\s*import\s*(?:(?:[\w$]+\s*,?\s*)?(?:\{[^}]*\}|\*\s*as\s+[\w$]+)?\s*from\s*)?("[^"]*"|'[^']*')\s*;?/;

/**
 * Rewrites the top-level function declarations among `compiled` (ranges from {@linkcode lazilyCompiledFunctions}) as
 * parenthesized function expressions hoisted after the chunk's imports (Note [Eager functions in Deno's code cache]).
 * Other ranges (methods, nested functions, expressions) are left alone. Returns the new source and the names hoisted.
 *
 * @example
 * ```ts
 * const source = 'import{x}from"./a.js";g();function g(){return x}';
 * const { source: out } = hoistEagerly(source, [{ start: source.indexOf('(){'), end: source.length }]);
 * // out: 'import{x}from"./a.js";var g=(function g(){return x});\ng();'
 * ```
 */
export function hoistEagerly(
  source: string,
  compiled: readonly CompiledRange[],
): { source: string; hoisted: string[] } {
  const depths = braceDepths(source, compiled.map((r) => r.start));
  const declarations: { from: number; to: number; name: string }[] = [];
  compiled.forEach(({ start, end }, k) => {
    if (depths[k] !== 0 || source[end - 1] !== '}') return;
    const from = Math.max(0, start - 400);
    const head = DECLARATION_HEAD.exec((from === 0 ? ';' : '') + source.slice(from, start));
    if (head === null) return;
    declarations.push({ from: start - head[1].length, to: end, name: head[2] });
  });
  declarations.sort((a, b) => a.from - b.from);
  const unique = declarations.filter((d, k) => k === 0 || d.from !== declarations[k - 1].from);
  if (unique.length === 0) return { source, hoisted: [] };
  let importsEnd = 0;
  for (let m = LEADING_IMPORT.exec(source); m !== null; m = LEADING_IMPORT.exec(source.slice(importsEnd))) {
    importsEnd += m[0].length;
  }
  if (unique[0].from < importsEnd) throw new Error('eager_compile: a function declaration among the imports');
  const parts = [source.slice(0, importsEnd)];
  for (const d of unique) parts.push(`var ${d.name}=(${source.slice(d.from, d.to)});`);
  parts.push('\n');
  let at = importsEnd;
  for (const d of unique) {
    parts.push(source.slice(at, d.from));
    at = d.to;
  }
  parts.push(source.slice(at));
  return { source: parts.join(''), hoisted: unique.map((d) => d.name) };
}
