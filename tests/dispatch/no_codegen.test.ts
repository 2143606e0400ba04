/**
 * Without `new Function` (a page whose Content-Security-Policy forbids 'unsafe-eval'), the dispatcher builds its
 * call stubs as closures and everything still works (Note [Stubs without code generation] in call_stub.ts). A
 * subprocess forbids `new Function` before importing the runtime, trains a small model and calls a custom operator;
 * the same script with code generation gives the same numbers.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { runScript } from '../_same_runtime.ts';
import { fileURLToPath } from 'node:url';
import { DispatchKey, DispatchKeySet, Library, tensor } from '../../mod.ts';
import { setCodeGeneration } from '../../core/dispatch/call_stub.ts';

function runNoEvalScript(): Record<string, unknown> {
  const path = fileURLToPath(new URL('./_no_eval_script.ts', import.meta.url));
  const result = runScript(path, [], { timeout: 120_000 });
  assert.equal(result.status, 0, `${result.stdout}\n${result.stderr}`);
  return JSON.parse(result.stdout.trim().split('\n').pop()!);
}

describe('call stubs without code generation', () => {
  it('train a model and dispatch custom operators where new Function is forbidden', () => {
    const out = runNoEvalScript();
    assert.equal(out.codegen, false);
    assert.equal(out.attempts, true);
    assert.ok((out.last as number) < (out.first as number), `loss did not fall: ${out.first} -> ${out.last}`);
    assert.deepEqual(out.twice, [3, -4]);
    assert.deepEqual(out.twiceDefault, [3]);
    assert.match(out.argumentError as string, /argument 'other' \(position 2\) must be Tensor, not str/);
    assert.match(
      out.schemaError as string,
      /Expected a value of type 'float' for argument 'f' but instead found type 'str'/,
    );
  });

  it('closure stubs give the same results, errors and keys as compiled ones', () => {
    for (const allowed of [false, true]) {
      setCodeGeneration(allowed);
      try {
        using def = new Library(`stubs${allowed}`, 'DEF');
        const op = def.define(`stubs${allowed}::mix(Tensor x, Tensor[] ys, Tensor? z, int n=1) -> Tensor`);
        using impls = new Library(`stubs${allowed}`, 'IMPL');
        impls.impl(
          op,
          (_hi, _lo, x, ys, z, n) => ys.reduce((acc, y) => acc.add(y), z === null ? x : x.add(z)).mul(n),
          DispatchKey.CPU,
        );
        const x = tensor([1, 2]), y = tensor([10, 20]);
        assert.deepEqual(op.call(x, [y, y], null).toArray(), [21, 42]);
        assert.deepEqual(op.call(x, [y], x, 2).toArray(), [24, 48]);
        const cpu = DispatchKeySet.of(DispatchKey.CPU);
        assert.deepEqual(op.redispatch(cpu.hi, cpu.lo, x, [], null, 3).toArray(), [3, 6]);
        assert.throws(() => op.call(x, [y], null, 1.5), /Expected a value of type 'int' for argument 'n'/);
      } finally {
        setCodeGeneration(undefined);
      }
    }
  });
});
