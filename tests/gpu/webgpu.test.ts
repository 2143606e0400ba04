// The WebGPU suites, loaded from one test file on purpose: Deno runs each test file in its own isolate, and each
// isolate would acquire its own device; tearing several of Deno's GL-backed devices down at process exit
// intermittently aborts the process with heap corruption (glibc: "double free or corruption") after every test
// has passed. One file, one isolate, one device. Each suite stays in its own module, one concept each.
import './elementwise_suite.ts';
import './training_suite.ts';
import './factories_copies_suite.ts';
import './differential_suite.ts';
import './vmap_suite.ts';
import './sort_scan_suite.ts';
import './conv_pool_suite.ts';
import './profiler_suite.ts';
import './autocast_suite.ts';
import './activations_suite.ts';
