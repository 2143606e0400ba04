/**
 * Every TypeScript block of README.md and of the guides in docs/ runs, as written, in a fresh process of the runtime
 * running this test (`deno run` under Deno, `bun` under Bun), its relative imports (`./mod.ts`, `../mod.ts`) pointed
 * at this checkout. A block the reader is meant to adapt rather than run (the URL import) is marked
 * ```` ```ts ignore ````.
 *
 * A line `console.log(EXPR); // [...]` whose comment starts with an array literal of strings or numbers is also
 * checked: the test replaces it by an assertion that EXPR deep-equals that array.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { runScript } from '../_same_runtime.ts';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = new URL('../../', import.meta.url);
const readme = readFileSync(new URL('README.md', root), 'utf8');
/** The documents whose blocks run: README.md and docs/*.md, by path from the repository root. */
const documents = [
  'README.md',
  ...readdirSync(new URL('docs/', root)).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`),
];

interface Block {
  readonly line: number;
  readonly code: string;
}

/** The README's ```ts blocks (not ```ts ignore), with the line each starts on. */
function tsBlocks(text: string): Block[] {
  const blocks: Block[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].trim() !== '```ts') continue;
    const start = i + 1;
    let end = start;
    while (end < lines.length && lines[end].trim() !== '```') end++;
    blocks.push({ line: start + 1, code: lines.slice(start, end).join('\n') });
    i = end;
  }
  return blocks;
}

const EXPECT = /^(\s*)console\.log\((.*)\);\s*\/\/\s*(\[[^\]]*\])/;

/** The block as a runnable module: imports from this checkout, expected-output comments turned into checks. */
function runnable(code: string, document: string): string {
  const base = new URL(document, root);
  const body = code
    .replace(/from '(\.{1,2}\/[^']*)'/g, (_, path: string) => `from '${new URL(path, base).href}'`)
    .split('\n')
    .map((line) => {
      const m = EXPECT.exec(line);
      return m === null ? line : `${m[1]}__expect(${m[2]}, ${m[3]});`;
    })
    .join('\n');
  const helper = `function __expect(actual: unknown, expected: unknown): void {
  const a = JSON.stringify(actual), e = JSON.stringify(expected);
  if (a !== e) throw new Error('README output differs: got ' + a + ', the README says ' + e);
  console.log(a);
}\n`;
  return body.includes('__expect(') ? `${body}\n${helper}` : body;
}

function runModule(path: string) {
  return runScript(path, [], { timeout: 120_000 });
}

describe('code blocks of README.md and docs/', () => {
  const blocks = tsBlocks(readme);

  it('has the blocks this test is meant to run', () => {
    // quick start, registration, Module attributes, WebGPU
    assert.ok(blocks.length >= 4, `found ${blocks.length} \`\`\`ts blocks`);
  });

  for (const document of documents) {
    for (const block of tsBlocks(readFileSync(new URL(document, root), 'utf8'))) {
      it(`the block at ${document}:${block.line} runs`, () => {
        const dir = mkdtempSync(join(tmpdir(), 'switchyard-docs-'));
        try {
          const path = join(dir, `block_${block.line}.ts`);
          writeFileSync(path, runnable(block.code, document));
          const result = runModule(path);
          assert.equal(
            result.status,
            0,
            `${document}:${block.line} failed (exit ${result.status}):\n${result.stdout}\n${result.stderr}`,
          );
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      });
    }
  }

  it('the registration example shows its profiler fallback firing', () => {
    const block = blocks.find((b) => b.code.includes(`new Library('_', 'IMPL', DispatchKey.Profiler)`));
    assert.ok(block !== undefined, 'the README has no profiler-fallback example');
    // Its printed timings carry an expected-output comment, so the run above fails unless the fallback recorded them.
    assert.ok(block.code.split('\n').some((line) => EXPECT.test(line) && line.includes('timings')));
  });
});
