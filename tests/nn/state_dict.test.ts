// Module state dicts with safetensors files (saveModel/loadModel): PyTorch's names, tied weights written once,
// strict errors that change nothing, non-persistent buffers left out.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { manualSeed, memoryStats, safetensors, type Tensor, tensor, zeros } from '../../mod.ts';
import { Embedding, Linear, Module, ModuleDict, ReLU, Sequential } from '../../core/nn/mod.ts';

const { loadModel, saveModel } = safetensors;

function withDir(fn: (dir: string) => void): void {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-sd-'));
  try {
    fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function header(path: string): Record<string, unknown> {
  const bytes = new Uint8Array(readFileSync(path));
  const n = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true));
  return JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
}

/** A language-model head with its output weight tied to the embedding, and a running buffer. */
class Tied extends Module<[Tensor], Tensor> {
  embed = new Embedding(5, 3);
  head = new Linear(3, 5, { bias: false });
  constructor() {
    super();
    this.head.registerParameter('weight', this.embed.weight);
    this.registerBuffer('steps', zeros([1], { dtype: 'int64' }));
    this.registerBuffer('scratch', zeros([2]), { persistent: false });
  }
  forward(x: Tensor): Tensor {
    using h = this.embed.call(x);
    return this.head.call(h);
  }
}

describe('saveModel / loadModel', () => {
  it('a nested model round-trips through a file under PyTorch names', () => {
    manualSeed(1);
    const source = new Sequential(new Linear(3, 4), new ReLU(), new Linear(4, 2));
    withDir((dir) => {
      const path = join(dir, 'mlp.safetensors');
      saveModel(source, path, { metadata: { epoch: '3' } });
      const h = header(path);
      assert.deepEqual(h.__metadata__, { epoch: '3', format: 'pt' });
      assert.deepEqual(Object.keys(h).filter((k) => k !== '__metadata__').sort(), [
        '0.bias',
        '0.weight',
        '2.bias',
        '2.weight',
      ]);
      manualSeed(2);
      const target = new Sequential(new Linear(3, 4), new ReLU(), new Linear(4, 2));
      const live = memoryStats().liveTensors;
      assert.deepEqual(loadModel(target, path), { missingKeys: [], unexpectedKeys: [] });
      assert.equal(memoryStats().liveTensors, live);
      for (const [k, t] of source.stateDict()) assert.deepEqual(target.stateDict().get(k)!.toArray(), t.toArray());
      target.dispose();
    });
    source.dispose();
  });

  it('tied weights are written once (metadata names the alias) and load into both names', () => {
    manualSeed(3);
    const source = new Tied();
    assert.deepEqual([...source.stateDict().keys()], ['steps', 'embed.weight', 'head.weight']);
    source.stateDict().get('steps')!.fill_(41);
    withDir((dir) => {
      const path = join(dir, 'tied.safetensors');
      saveModel(source, path);
      const h = header(path);
      assert.deepEqual(Object.keys(h).filter((k) => k !== '__metadata__').sort(), ['embed.weight', 'steps']);
      assert.deepEqual(h.__metadata__, { format: 'pt', 'head.weight': 'embed.weight' });
      manualSeed(4);
      const target = new Tied();
      assert.deepEqual(loadModel(target, path), { missingKeys: [], unexpectedKeys: [] });
      assert.deepEqual(target.embed.weight.toArray(), source.embed.weight.toArray());
      assert.equal(target.head.weight, target.embed.weight);
      assert.deepEqual(target.stateDict().get('steps')!.toArray(), [41]);
      target.dispose();
    });
    source.dispose();
  });

  it("strict loading reports missing and unexpected names in PyTorch's words and changes nothing", () => {
    manualSeed(5);
    const source = new ModuleDict({ a: new Linear(2, 2), b: new Linear(2, 1) });
    withDir((dir) => {
      const path = join(dir, 'dict.safetensors');
      saveModel(source, path);
      const target = new ModuleDict({ a: new Linear(2, 2), c: new Linear(2, 1) });
      const before = target.stateDict().get('a.weight')!.toArray();
      assert.throws(
        () => loadModel(target, path),
        (e: Error) =>
          e.message ===
            'Error(s) in loading state_dict for ModuleDict:\n\t' +
              'Missing key(s) in state_dict: "c.weight", "c.bias". \n\t' +
              'Unexpected key(s) in state_dict: "b.bias", "b.weight". ', // the file's order (sorted by name)
      );
      assert.deepEqual(target.stateDict().get('a.weight')!.toArray(), before);
      const result = loadModel(target, path, { strict: false });
      assert.deepEqual(result, { missingKeys: ['c.weight', 'c.bias'], unexpectedKeys: ['b.bias', 'b.weight'] });
      assert.deepEqual(target.stateDict().get('a.weight')!.toArray(), source.stateDict().get('a.weight')!.toArray());
      const wrong = new ModuleDict({ a: new Linear(3, 2), b: new Linear(2, 1) });
      assert.throws(() => loadModel(wrong, path), /size mismatch for a.weight: copying a param with shape/);
      assert.throws(() => loadModel({} as never, path), /argument 'model' must be a Module, not dict/);
      target.dispose();
      wrong.dispose();
    });
    source.dispose();
  });
});

describe('non-persistent buffers', () => {
  it('are buffers (moved, listed) but not in stateDict(), so loading does not expect them', () => {
    const m = new Tied();
    assert.deepEqual(m.namedBuffers().map(([n]) => n), ['steps', 'scratch']);
    assert.ok(![...m.stateDict().keys()].includes('scratch'));
    const state = new Map(m.stateDict());
    assert.deepEqual(m.loadStateDict(state), { missingKeys: [], unexpectedKeys: [] });
    // Registering the name again as persistent brings it back.
    m.registerBuffer('scratch', tensor([1, 2], { dtype: 'float32' }));
    assert.ok([...m.stateDict().keys()].includes('scratch'));
    assert.throws(
      () => m.registerBuffer('x', null, { persistent: 'no' as never }),
      /argument 'persistent' must be bool/,
    );
    m.dispose();
  });
});
