// Runs the runtime as a page whose Content-Security-Policy forbids 'unsafe-eval' would: `new Function` throws
// before anything is imported. Prints one JSON line with what it computed (tests/dispatch/no_codegen.test.ts).
const RealFunction = Function;
let attempts = 0;
const Forbidden = function (..._args: unknown[]) {
  attempts++;
  throw new EvalError("Refused to evaluate a string as JavaScript because 'unsafe-eval' is not allowed");
};
Object.defineProperty(Forbidden, 'prototype', { value: RealFunction.prototype });
(globalThis as { Function: unknown }).Function = Forbidden;

const { add, crossEntropy, DispatchKey, Library, manualSeed, nn, optim, randn, scope, tensor, zeros } = await import(
  '../../mod.ts'
);
const { canGenerateCode } = await import('../../core/dispatch/call_stub.ts');

manualSeed(0);
const model = new nn.Sequential(new nn.Linear(4, 8), new nn.ReLU(), new nn.Linear(8, 3));
const opt = new optim.SGD(model.parameters(), { lr: 0.1 });
const x = randn([16, 4]), y = tensor(Array.from({ length: 16 }, (_, i) => i % 3));
const losses: number[] = [];
for (let step = 0; step < 20; step++) {
  losses.push(scope(() => {
    const loss = crossEntropy(model.forward(x), y);
    opt.zeroGrad();
    loss.backward();
    opt.step();
    return loss.item() as number;
  }));
}
using def = new Library('noeval', 'DEF');
const twice = def.define('noeval::twice(Tensor x, float f=2.0) -> Tensor');
using impls = new Library('noeval', 'IMPL');
impls.impl(twice, (_hi, _lo, t, f) => t.mul(f), DispatchKey.CPU);
let argumentError = '';
try {
  add(zeros(2), 'x' as never);
} catch (e) {
  argumentError = (e as Error).message;
}
let schemaError = '';
try {
  twice.call(zeros(1), 'two' as never);
} catch (e) {
  schemaError = (e as Error).message.split('\n')[0];
}
console.log(JSON.stringify({
  codegen: canGenerateCode(),
  attempts: attempts > 0,
  first: losses[0],
  last: losses[losses.length - 1],
  twice: twice.call(tensor([1.5, -2])).toArray(),
  twiceDefault: twice.call(tensor([1]), 3).toArray(),
  argumentError,
  schemaError,
}));
