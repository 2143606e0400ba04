// The library's deferred registration groups (Note [Deferred registrations] in core/dispatch/dispatcher.ts): vmap's
// batching rules, random kernels and fallback, and the Functionalize fallback, registered when first needed. Each
// case runs a fresh process (tests/features/_deferred_script.ts), since any earlier vmap in this process would have
// run them already.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { runScript } from '../_same_runtime.ts';

const script = new URL('./_deferred_script.ts', import.meta.url).pathname;
const VMAP = 'vmap (batching rules, random kernels, for-loop fallback)';
const FUNCTIONALIZE = 'functionalize (the Functionalize fallback)';

function run(mode: string): Record<string, unknown> {
  const r = runScript(script, [mode]);
  assert.equal(r.status, 0, `${mode}: ${r.stderr}`);
  const out = JSON.parse(r.stdout.trim().split('\n').pop()!);
  assert.deepEqual(out.pendingAtImport, [VMAP, FUNCTIONALIZE], `${mode}: deferred at import`);
  return out;
}

describe('deferred feature registrations', () => {
  it('a program that never maps or functionalizes never registers them', () => {
    const out = run('never');
    assert.deepEqual(out.result, [115.5, [[16, 23], [19, 26]]]);
    assert.deepEqual(out.pending, [VMAP, FUNCTIONALIZE]);
  });

  it('dumps before first use show the batching rules, random kernels and the Functionalize fallback', () => {
    const out = run('dump');
    assert.deepEqual(out.negBatched, ['Batched: batching rule for aten::neg :: (none) [ boxed unboxed ]']);
    assert.deepEqual(out.randnVmapMode, ['VmapMode: registered at core/features/vmap_random.ts [kernel]']);
    assert.deepEqual(out.cloneFunctionalize, ['Functionalize: functionalize kernel [backend fallback]']);
    assert.deepEqual(out.pending, []);
  });

  it("a user's Batched kernel registered before the first vmap wins, after a warning naming the rule", () => {
    const out = run('user');
    assert.deepEqual(out.pendingAfterUserImpl, [FUNCTIONALIZE], 'the vmap group ran before the user registration');
    assert.equal(out.during, 'the user kernel ran');
    assert.deepEqual(out.after, [[-1, -2], [-3, -4]], 'disposing it restores the batching rule');
    assert.equal((out.warnings as string[]).length, 1);
    assert.match(
      (out.warnings as string[])[0],
      /dispatch key: Batched\n {2}previous kernel: batching rule for aten::neg\n {7}new kernel: user rule for neg/,
    );
  });

  it('unregisterFunctionalize before first use keeps the fallback away, as after eager registration', () => {
    const out = run('unregistered');
    assert.deepEqual(out.pending, [VMAP]);
    assert.match(
      String(out.call),
      /^Could not run 'aten::add\.Scalar' with arguments from the 'Functionalize' backend/,
    );
    assert.equal(out.functionalizeSlot, 'missing');
  });

  it('Workers see them: sharing runs them, and a Worker attached to the store reads and uses their rows', () => {
    const out = run('worker');
    assert.deepEqual(out.pendingAfterSharing, []);
    assert.equal(out.mainNegBatched, 'batching rule for aten::neg');
    assert.equal(out.mainRandnVmapMode, 'registered at core/features/vmap_random.ts');
    assert.deepEqual(out.agent, {
      pending: [],
      negBatched: 'batching rule for aten::neg',
      randnVmapMode: 'registered at core/features/vmap_random.ts',
      mapped: [[-1, -2], [-3, -4]],
    });
  });
});
