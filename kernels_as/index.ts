// Entry point of the kernel module: re-exports every kernel family.
export * from './common';
export * from './elementwise';
export * from './unary';
export * from './binary';
export * from './ternary';
export * from './cast';
export * from './reduce';
export * from './matmul';
export * from './softmax';
export * from './indexing';
export * from './scan_sort';
export * from './conv';
export * from './activation';
