// An operator library every agent loads (loadOperatorLibrary): wtest::probe dispatches through a shared kernel
// slot to kernels defined by stable name in each agent.
import { defineKernel, DispatchKey, Library, sharedSlot } from '../../mod.ts';

const lib = new Library('wtest', 'DEF');
lib.define('wtest::probe(Tensor x) -> int');
sharedSlot(lib, 'probe', DispatchKey.CPU);
defineKernel('wtest.base', () => -1);
for (let j = 0; j < 4; j++) defineKernel(`wtest.k${j}`, () => j);
