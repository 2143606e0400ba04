/**
 * The typed surface of the AssemblyScript kernel module: the union of what each kernel family exports.
 *
 * @module
 */
import type { ConvExports } from './exports_conv.ts';
import type { ElementwiseExports } from './exports_elementwise.ts';
import type { IndexingExports } from './exports_indexing.ts';
import type { LinalgExports } from './exports_linalg.ts';
import type { ScanSortExports } from './exports_scan_sort.ts';

/** Every function and value the kernel wasm module exports. */
export type KernelExports = ElementwiseExports & LinalgExports & IndexingExports & ScanSortExports & ConvExports;
