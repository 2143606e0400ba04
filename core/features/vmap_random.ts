/**
 * Random operators under vmap, at the VmapMode key (which every active vmap includes): `randomness: 'error'`
 * refuses them with PyTorch's message, `'different'` draws independent values per sample (one draw of the
 * batched shape), `'same'` draws one sample's values and shares them across the batch.
 *
 * @module
 */
import { DispatchKey } from '../dispatch/dispatch_key.ts';
import { RuntimeError } from '../dispatch/errors.ts';
import { withExcludedKeys } from '../dispatch/local_dispatch_key_set.ts';
import { Library } from '../dispatch/library.ts';
import type { OperatorHandle } from '../dispatch/operator_handle.ts';
import type { Tensor } from '../tensor/tensor.ts';
import { aten } from '../ops/aten_call.ts';
import { registerOperators } from '../ops/registry.ts';
import { activeLevels, physicalOf, wrapPhysical } from './vmap_batched.ts';

const ERROR_MESSAGE = "vmap: called random operation while in randomness error mode. Please either use the 'same' " +
  "or 'different' randomness flags on vmap or perform the randomness operation out of vmap";

const INPLACE_MESSAGE = 'vmap: Cannot ask for different inplace randomness on an unbatched tensor. This will ' +
  'appear like same randomness. If this is necessary for your usage, please file an issue with functorch.';

/** The active levels that draw different values, after refusing the call under 'error'. */
function differentLevels(): { levels: number[]; sizes: number[] } {
  const levels: number[] = [], sizes: number[] = [];
  for (const entry of activeLevels()) {
    if (entry.randomness === 'error') throw new RuntimeError(ERROR_MESSAGE);
    if (entry.randomness === 'different') {
      levels.push(entry.level);
      sizes.push(entry.size);
    }
  }
  return { levels, sizes };
}

const belowVmapMode = <T>(fn: () => T): T => withExcludedKeys([DispatchKey.VmapMode], fn);

/** A factory (`rand(size, ...)`): the size argument at `sizeIndex` gains the different levels' sizes. */
function factoryKernel(op: OperatorHandle, sizeIndex: number) {
  return (_hi: number, _lo: number, ...args: unknown[]) => {
    const { levels, sizes } = differentLevels();
    const call = args.slice();
    call[sizeIndex] = [...sizes, ...(args[sizeIndex] as number[])];
    return wrapPhysical(belowVmapMode(() => op.call(...call)) as Tensor, levels);
  };
}

/**
 * A `*_like` random operator: the factory it stands for is called with the logical shape (and the batch sizes
 * of the different levels in front), keeping the input's dtype and device unless given.
 */
function likeKernel(factory: OperatorHandle, leading: number) {
  return (_hi: number, _lo: number, self: Tensor, ...rest: unknown[]) => {
    const { levels, sizes } = differentLevels();
    const scalars = rest.slice(0, leading);
    const [dtype, layout, device, pin] = rest.slice(leading);
    const shape = [...sizes, ...self.shape];
    return wrapPhysical(
      belowVmapMode(() =>
        factory.call(...scalars, shape, dtype ?? self.dtype, layout ?? null, device ?? self.device, pin ?? null)
      ) as Tensor,
      levels,
    );
  };
}

/** `normal_`/`uniform_`: 'different' fills the physical tensor, 'same' fills one sample and copies it in. */
function inplaceKernel(op: OperatorHandle) {
  return (_hi: number, _lo: number, self: Tensor, ...rest: unknown[]) => {
    const { levels } = differentLevels();
    const own = physicalOf(self).levels;
    if (levels.some((l) => !own.includes(l))) throw new RuntimeError(INPLACE_MESSAGE);
    if (levels.length > 0 || own.length === 0) {
      belowVmapMode(() => op.call(physicalOf(self).t, ...rest));
      return self;
    }
    const sample = aten('empty', 'memory_format').call(self.shape, self.dtype, null, self.device, null, null) as Tensor;
    belowVmapMode(() => op.call(sample, ...rest));
    aten('copy_').call(self, sample, false);
    return self;
  };
}

let library: Library | undefined;

/**
 * Registers the VmapMode kernels of the random operators (idempotent). `registerVmap` (vmap.ts) does it, when first
 * needed.
 *
 * @example
 * ```ts
 * import { registerVmapRandomness } from './vmap_random.ts';
 * registerVmapRandomness();
 * ```
 */
export function registerVmapRandomness(): void {
  if (library !== undefined) return;
  const ops = registerOperators() as Record<string, OperatorHandle>;
  const lib = new Library('aten', 'IMPL', DispatchKey.VmapMode, { location: 'core/features/vmap_random.ts' });
  library = lib; // first, as in registerBatchingRules: a registration at VmapMode runs the deferred vmap group
  const factories: Record<string, number> = {
    'rand': 0,
    'rand.generator': 0,
    'randn': 0,
    'randn.generator': 0,
    'randint': 1,
    'randint.generator': 1,
    'randint.low': 2,
    'randint.low_generator': 2,
  };
  for (const [name, sizeIndex] of Object.entries(factories)) lib.impl(name, factoryKernel(ops[name], sizeIndex));
  lib.impl('rand_like', likeKernel(ops['rand'], 0));
  lib.impl('randn_like', likeKernel(ops['randn'], 0));
  lib.impl('randint_like', likeKernel(ops['randint'], 1));
  lib.impl('randint_like.low_dtype', likeKernel(ops['randint.low'], 2));
  lib.impl('normal_', inplaceKernel(ops['normal_']));
  lib.impl('uniform_', inplaceKernel(ops['uniform_']));
}
