// scripts/eager_compile.ts: the brace scanner reads strings, templates, regular expressions and comments right (a
// misread must throw, never pass); hoisting keeps what a module's function declarations do (hoisting, names, bodies)
// and touches only top-level declarations; and, in a real Deno, a called top-level function is compiled lazily
// before hoisting and eagerly (absent from V8's log) after it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import process from 'node:process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import fc from 'fast-check';
import {
  braceDepths,
  type CompiledRange,
  functionEventLogFlag,
  hoistEagerly,
  lazilyCompiledFunctions,
  staticImportCycle,
} from '../../scripts/eager_compile.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The source without its \u00a7 markers, and what braceDepths gives at each marker. */
function depthsAtMarks(marked: string): { source: string; depths: number[] } {
  const at: number[] = [];
  let source = '';
  for (const c of marked) {
    if (c === '\u00a7') at.push(source.length);
    else source += c;
  }
  return { source, depths: braceDepths(source, at) };
}

/**
 * The range V8 logs for a function (from the `(` of its parameters to after its body) whose head is the first match of
 * `head` in `source`; the test sources have no braces in strings.
 */
function rangeOf(source: string, head: string): CompiledRange {
  const start = source.indexOf('(', source.indexOf(head));
  let i = start, parens = 0;
  do {
    if (source[i] === '(') parens++;
    if (source[i] === ')') parens--;
    i++;
  } while (parens > 0);
  let braces = 0;
  i = source.indexOf('{', i);
  do {
    if (source[i] === '{') braces++;
    if (source[i] === '}') braces--;
    i++;
  } while (braces > 0);
  return { start, end: i };
}

describe('braceDepths', () => {
  it('skips braces in strings, templates, regular expressions and comments', () => {
    // § marks where the depth is read.
    const { depths } = depthsAtMarks(
      '\u00a7a="{";b=\'}\';function f(){\u00a7return`{${{x:`}${"}"}`}.x}\u00a7`+/[}/]{2}\\//g.source}' +
        '\u00a7/* { */// }\n\u00a7c=d/2/e;if(x){\u00a7y=g(/}/)}\u00a7',
    );
    assert.deepEqual(depths, [0, 1, 1, 0, 0, 1, 0]);
  });

  it('tells division from a regular expression by what precedes the slash', () => {
    const { depths } = depthsAtMarks(
      'a=b/c/d;e=f++/2/g;h=(i)/2/{};function j(){return/{/.test(k)}\u00a7l=typeof/}/;m=[1]/2/{}\u00a7',
    );
    assert.deepEqual(depths, [0, 0]);
  });

  it('throws on a source it cannot have read right instead of returning a wrong depth', () => {
    assert.throws(() => braceDepths('function f(){', []), /end of source at depth 1/);
    assert.throws(() => braceDepths('a="b', []), /unterminated string/);
    assert.throws(() => braceDepths('a=`${b', []), /unterminated template|depth/);
    assert.throws(() => braceDepths('}', []), /unbalanced/);
    assert.throws(() => braceDepths('x=/abc\n', []), /unterminated regular expression/);
  });

  it('agrees with the depth built into random programs of blocks, strings, templates and regular expressions', () => {
    // A program is a list of pieces; a marker after each records the depth the generator knows.
    type Piece = { text: string; inner?: Piece[]; kind: 'block' | 'template' | 'atom' };
    const atom = fc.constantFrom(
      'a=1;',
      'b="{}\\"}";',
      "c='{';",
      'd=/[/}]\\{/g;',
      'e=f/2/3;',
      '/* } */',
      '// {\n',
      'g++/2;',
      'h=`}{`;',
      'return/}/;',
    ).map((text): Piece => ({ text, kind: 'atom' }));
    const piece: fc.Arbitrary<Piece> = fc.letrec<{ piece: Piece }>((tie) => ({
      piece: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        atom,
        fc.array(tie('piece'), { maxLength: 4 }).map((inner): Piece => ({ text: '', inner, kind: 'block' })),
        fc.array(tie('piece'), { maxLength: 3 }).map((inner): Piece => ({ text: '', inner, kind: 'template' })),
      ),
    })).piece;
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 6 }), (pieces) => {
        let source = '';
        const at: number[] = [], expected: number[] = [];
        const emit = (list: Piece[], depth: number) => {
          for (const p of list) {
            if (p.kind === 'atom') source += p.text;
            else if (p.kind === 'block') {
              source += 'if(x){';
              emit(p.inner!, depth + 1);
              source += '}';
            } else {
              // A template whose substitution holds the inner pieces inside a block at the same depth + 1.
              source += 's=`{${(()=>{';
              emit(p.inner!, depth + 1);
              source += '})()}}`;';
            }
            at.push(source.length);
            expected.push(depth);
          }
        };
        emit(pieces, 0);
        assert.deepEqual(braceDepths(source, at), expected, source);
      }),
      { seed: 7, numRuns: 300 },
    );
  });
});

describe('hoistEagerly', () => {
  const SOURCE = [
    'const early = [used(1), gen().next().value];',
    'function used(a, b = { k: 1 }) { return a + b.k + helper(); }',
    'function helper() { function nested() { return 10; } return nested(); }',
    'async function later() { return used(2); }',
    'function* gen() { yield 5; }',
    'const expr = function named() { return 3; };',
    'class K { method() { return 4; } }',
    'function unused() { return 6; }',
  ].join('\n');
  const compiled = ['function used', 'function helper', 'function nested', 'function later', 'function* gen'].map((
    head,
  ) => rangeOf(SOURCE, head));
  compiled.push(rangeOf(SOURCE, 'function named'), rangeOf(SOURCE, 'method('));

  it('hoists exactly the top-level declarations V8 compiled lazily', () => {
    const { hoisted } = hoistEagerly(SOURCE, compiled);
    assert.deepEqual(hoisted, ['used', 'helper', 'later', 'gen']);
  });

  it('keeps what the declarations did: early calls, names, lengths, bodies, async and generators', async () => {
    const { source } = hoistEagerly(SOURCE, compiled);
    assert.match(source, /^var used=\(function used\(a, b = \{ k: 1 \}\) \{/);
    const probe = 'return { early, used, helper, later, gen, expr, unused, K };';
    const before = new Function(SOURCE + '\n' + probe)(), after = new Function(source + '\n' + probe)();
    assert.deepEqual(after.early, [12, 5]);
    assert.deepEqual(after.early, before.early);
    for (const name of ['used', 'helper', 'later', 'gen', 'unused']) {
      assert.equal(after[name].name, name);
      assert.equal(after[name].length, before[name].length);
      assert.equal(after[name].toString(), before[name].toString());
    }
    assert.equal(await after.later(), 13);
    assert.equal(after.expr(), 3);
    assert.equal(new after.K().method(), 4);
  });

  it('puts the hoisted functions after the imports and leaves a source without candidates unchanged', () => {
    const withImports = 'import{a as b}from"./x.js";import"./y.js";b(f());function f(){return 1}';
    const { source } = hoistEagerly(withImports, [rangeOf(withImports, 'function f')]);
    assert.equal(source, 'import{a as b}from"./x.js";import"./y.js";var f=(function f(){return 1});\nb(f());');
    const plain = 'x(function(){return 1});';
    assert.deepEqual(hoistEagerly(plain, [rangeOf(plain, 'function(')]), { source: plain, hoisted: [] });
  });
});

describe('staticImportCycle', () => {
  it('finds a cycle of static imports and re-exports, not one through a dynamic import', () => {
    const chunks = new Map([
      ['mod.js', 'import{a}from"./chunk-a.js";import"./chunk-b.js";export{a};'],
      ['chunk-a.js', 'import{b as c}from "./chunk-b.js";var a=()=>import("./mod.js");export{a};'],
      ['chunk-b.js', 'var b=1;export{b};'],
    ]);
    assert.equal(staticImportCycle(chunks), undefined);
    chunks.set('chunk-b.js', 'export*from"./chunk-c.js";var b=1;export{b};');
    chunks.set('chunk-c.js', "import{a}from'./chunk-a.js';");
    assert.deepEqual(staticImportCycle(chunks), ['chunk-a.js', 'chunk-b.js', 'chunk-c.js', 'chunk-a.js']);
  });
});

describe('lazilyCompiledFunctions', () => {
  it("reads the parse-function events of V8's log by script URL", () => {
    const log = [
      'script-details,3,ext:core/mod.js,0,0,',
      'script-details,7,file:///b/chunk.js,0,0,',
      'function,parse-function,3,1,9,0.01,50,internal',
      'function,parse-function,7,12,40,0.02,100,f',
      'function,first-execution,7,12,40,0,101,f',
      'function,parse-function,7,50,90,0.02,102,g',
      'function,parse-function,9,1,2,0.02,103,orphan',
    ].join('\n');
    const out = lazilyCompiledFunctions(log);
    assert.deepEqual(out.get('file:///b/chunk.js'), [{ start: 12, end: 40 }, { start: 50, end: 90 }]);
    assert.deepEqual([...out.keys()], ['ext:core/mod.js', 'file:///b/chunk.js']);
  });

  it('in Deno, a called top-level function compiles lazily before hoisting and eagerly after it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-eager-'));
    try {
      const module = join(dir, 'lib.js'), main = join(dir, 'main.js'), log = join(dir, 'v8.log');
      const lib = 'export const x = twice(21);\nfunction twice(a) { return a * 2; }\nfunction idle() { return 0; }\n';
      writeFileSync(module, lib);
      writeFileSync(main, `import { x } from ${JSON.stringify(pathToFileURL(module).href)};\nconsole.log(x);\n`);
      const profile = () => {
        const run = spawnSync(join(ROOT, 'node_modules', '.bin', 'deno'), [
          'run',
          '--no-check',
          functionEventLogFlag(log),
          main,
        ], { encoding: 'utf8', env: { ...process.env, DENO_DIR: join(dir, 'deno_dir'), NO_COLOR: '1' } });
        assert.equal(run.status, 0, run.stderr);
        assert.equal(run.stdout, '42\n');
        return lazilyCompiledFunctions(readFileSync(log, 'utf8')).get(pathToFileURL(module).href) ?? [];
      };
      const before = profile();
      assert.deepEqual(before.map((r) => lib.slice(r.start, r.end)), ['(a) { return a * 2; }']);
      const { source, hoisted } = hoistEagerly(lib, before);
      assert.deepEqual(hoisted, ['twice']);
      writeFileSync(module, source);
      assert.deepEqual(profile(), []);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
