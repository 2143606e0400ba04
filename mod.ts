/**
 * Switchyard: a tensor runtime for Deno and Bun whose every operator call is routed by a
 * PyTorch-c10-style dispatcher.
 *
 * @example
 * ```ts
 * import { Dispatcher, DispatchKey, Library } from './mod.ts';
 * const d = new Dispatcher();
 * using lib = new Library('demo', 'DEF', undefined, { dispatcher: d });
 * const op = lib.define('demo::inc(int x) -> int');
 * lib.impl('inc', (_hi: number, _lo: number, x: number) => x + 1, DispatchKey.CompositeImplicitAutograd);
 * op.call(41); // 42
 * ```
 *
 * @module
 */
export * from './core/dispatch/mod.ts';
