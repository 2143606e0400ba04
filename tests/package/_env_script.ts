// Run by deno_permissions.test.ts in a fresh Deno process: records every Deno.env access while the package is
// imported and used, then prints what the environment helpers returned.
const calls: string[] = [];
const env = Deno.env as unknown as Record<string, (...args: unknown[]) => unknown>;
for (const method of ['get', 'set', 'has', 'delete', 'toObject']) {
  const original = env[method].bind(Deno.env);
  env[method] = (...args: unknown[]) => {
    calls.push(`${method}(${args.join(',')})`);
    return original(...args);
  };
}
const { tensor, Dispatcher } = await import('../../mod.ts');
const { readEnv, setEnvDefault } = await import('../../core/dispatch/env.ts');
const sum = tensor([1, 2, 3], { dtype: 'float32' }).sum().item();
const dispatcher = new Dispatcher();
console.log(JSON.stringify({
  sum,
  traceEnabled: dispatcher.traceEnabled,
  checked: readEnv('SWITCHYARD_CHECKED') ?? null,
  setEgl: setEnvDefault('EGL_PLATFORM', 'surfaceless'),
  calls,
}));
