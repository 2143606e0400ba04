// An operator library every agent loads (loadOperatorLibrary): wtest::probe dispatches through a shared kernel
// slot to kernels defined by stable name in each agent; wtest::probe2 through the shared table store, where any
// agent registers kernels wtest.j0..j3 (defined by stable name in each agent) over its base kernel.
import { defineKernel, DispatchKey, Library, sharedSlot } from '../../mod.ts';

const lib = new Library('wtest', 'DEF');
lib.define('wtest::probe(Tensor x) -> int');
sharedSlot(lib, 'probe', DispatchKey.CPU);
defineKernel('wtest.base', () => -1);
for (let j = 0; j < 4; j++) defineKernel(`wtest.k${j}`, () => j);

lib.define('wtest::probe2(Tensor x) -> int');
lib.impl('probe2', () => -1, DispatchKey.CompositeExplicitAutograd, { kernelName: 'wtest.base2' });
for (let j = 0; j < 4; j++) defineKernel(`wtest.j${j}`, () => j);
