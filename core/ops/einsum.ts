/**
 * `einsum` as PyTorch 1.13 decomposes it (aten/src/ATen/native/Linear.cpp): parse the equation (with `...`
 * and the implicit output of the labels seen once, in alphabetical order), take diagonals for labels repeated in
 * one operand, sum out labels no later operand or the output needs, then contract the operands left to right,
 * each pair as one `bmm` over `[batch, kept of left, summed]` x `[batch, summed, kept of right]` after
 * `permute` + `reshape`. Size-1 dims broadcast against the other operands' sizes. Autograd differentiates
 * through the parts.
 *
 * @module
 */
import { RuntimeError } from '../dispatch/errors.ts';
import type { Tensor } from '../tensor/tensor.ts';
import { Temporaries } from './aten_call.ts';

/** A label: a letter's code, or -1 - k for the k-th ellipsis dim (counted from the ellipsis' start). */
type Label = number;

const isLetter = (c: string) => /^[a-zA-Z]$/.test(c);

interface Parsed {
  readonly inputs: Label[][];
  readonly output: Label[];
}

function parseOperand(term: string, ndim: number, index: number, ellipsisDims: number): Label[] {
  const labels: Label[] = [];
  let i = 0, sawEllipsis = false;
  const letters = term.replace('...', '').length;
  while (i < term.length) {
    if (term.startsWith('...', i)) {
      if (sawEllipsis) {
        throw new RuntimeError(`einsum(): found '.' for operand ${index} for which an ellipsis was already found`);
      }
      sawEllipsis = true;
      const count = ndim - letters;
      for (let k = 0; k < count; k++) labels.push(-1 - (ellipsisDims - count + k));
      i += 3;
      continue;
    }
    const c = term[i];
    if (c === '.') {
      throw new RuntimeError(`einsum(): found '.' for operand ${index} that is not part of any ellipsis`);
    }
    if (!isLetter(c)) {
      throw new RuntimeError(
        'einsum(): invalid subscript given at index ' + i + ' in the equation string, subscripts must be in [a-zA-Z]',
      );
    }
    labels.push(c.charCodeAt(0));
    i++;
  }
  if (sawEllipsis ? labels.length > ndim : labels.length !== ndim) {
    throw new RuntimeError(
      `einsum(): the number of subscripts in the equation (${letters}) ` +
        (sawEllipsis ? 'is more than the number of dimensions' : 'does not match the number of dimensions') +
        ` (${ndim}) for operand ${index}${sawEllipsis ? '' : ' and no ellipsis was given'}`,
    );
  }
  return labels;
}

function parse(equation: string, operands: readonly Tensor[]): Parsed {
  const eq = equation.replace(/\s+/g, '');
  const arrow = eq.indexOf('->');
  const lhs = arrow === -1 ? eq : eq.slice(0, arrow);
  const terms = lhs.split(',');
  if (terms.length > operands.length) {
    throw new RuntimeError('einsum(): fewer operands were provided than specified in the equation');
  }
  if (terms.length < operands.length) {
    throw new RuntimeError('einsum(): more operands were provided than specified in the equation');
  }
  // The ellipsis covers as many dims as the operand with the most dims beyond its letters.
  let ellipsisDims = 0;
  terms.forEach((t, i) => {
    if (t.includes('...')) ellipsisDims = Math.max(ellipsisDims, operands[i].ndim - t.replace('...', '').length);
  });
  const inputs = terms.map((t, i) => parseOperand(t, operands[i].ndim, i, ellipsisDims));
  let output: Label[];
  if (arrow === -1) {
    const counts = new Map<Label, number>();
    for (const labels of inputs) for (const l of labels) counts.set(l, (counts.get(l) ?? 0) + 1);
    const ell = [...counts.keys()].filter((l) => l < 0).sort((a, b) => b - a);
    const letters = [...counts.entries()].filter(([l, c]) => l >= 0 && c === 1).map(([l]) => l).sort((a, b) => a - b);
    output = [...ell, ...letters];
  } else {
    const rhs = eq.slice(arrow + 2);
    output = [];
    let i = 0;
    const all = new Set(inputs.flat());
    while (i < rhs.length) {
      if (rhs.startsWith('...', i)) {
        for (let k = 0; k < ellipsisDims; k++) output.push(-1 - k);
        i += 3;
        continue;
      }
      const c = rhs[i];
      if (!isLetter(c)) {
        throw new RuntimeError(
          'einsum(): invalid subscript given at index ' + (arrow + 2 + i) +
            ' in the equation string, subscripts must be in [a-zA-Z]',
        );
      }
      const l = c.charCodeAt(0);
      if (output.includes(l)) {
        throw new RuntimeError(`einsum(): output subscript ${c} appears more than once in the output`);
      }
      if (!all.has(l)) {
        throw new RuntimeError(`einsum(): output subscript ${c} does not appear in the equation for any input operand`);
      }
      output.push(l);
      i++;
    }
  }
  return { inputs, output };
}

interface Operand {
  t: Tensor;
  labels: Label[];
}

const name = (l: Label) => (l >= 0 ? String.fromCharCode(l) : '...');

/** Takes the diagonal of every label repeated within one operand. */
function diagonals(op: Operand, temps: Temporaries): Operand {
  let { t, labels } = op;
  for (;;) {
    const i = labels.findIndex((l, k) => labels.indexOf(l) !== k);
    if (i === -1) return { t, labels };
    const first = labels.indexOf(labels[i]);
    if (t.shape[first] !== t.shape[i]) {
      throw new RuntimeError(
        `einsum(): subscript ${name(labels[i])} is repeated for operand but the sizes don't match, ` +
          `${t.shape[i]} != ${t.shape[first]}`,
      );
    }
    // diagonal() drops both dims and appends the diagonal as the last one.
    t = temps.track(t.diagonal(0, first, i));
    labels = [...labels.filter((_, k) => k !== first && k !== i), labels[i]];
  }
}

/** Sums `op` over the labels in `drop`. */
function sumOut(op: Operand, drop: ReadonlySet<Label>, temps: Temporaries): Operand {
  const dims = op.labels.map((l, i) => (drop.has(l) ? i : -1)).filter((i) => i >= 0);
  if (dims.length === 0) return op;
  return { t: temps.track(op.t.sum(dims)), labels: op.labels.filter((l) => !drop.has(l)) };
}

/** Permutes and reshapes `op` into `groups` of labels, each group one dim of the product of its sizes. */
function grouped(op: Operand, groups: Label[][], sizes: Map<Label, number>, temps: Temporaries): Tensor {
  const order = groups.flat().map((l) => op.labels.indexOf(l));
  let t = op.t;
  // Broadcast size-1 dims to the common size first.
  const target = op.labels.map((l) => sizes.get(l)!);
  if (target.some((s, i) => s !== t.shape[i])) t = temps.track(t.expand(target));
  const permuted = temps.track(t.permute(order));
  return temps.track(permuted.reshape(groups.map((g) => g.reduce((a, l) => a * sizes.get(l)!, 1))), permuted);
}

function contract(
  a: Operand,
  b: Operand,
  keep: ReadonlySet<Label>,
  sizes: Map<Label, number>,
  temps: Temporaries,
): Operand {
  const inB = new Set(b.labels), inA = new Set(a.labels);
  const batch = a.labels.filter((l) => inB.has(l) && keep.has(l));
  const summed = a.labels.filter((l) => inB.has(l) && !keep.has(l));
  const aOnly = a.labels.filter((l) => !inB.has(l));
  const bOnly = b.labels.filter((l) => !inA.has(l));
  const left = grouped(a, [batch, aOnly, summed], sizes, temps);
  const right = grouped(b, [batch, summed, bOnly], sizes, temps);
  const product = temps.track(left.bmm(right));
  const labels = [...batch, ...aOnly, ...bOnly];
  return { t: temps.track(product.reshape(labels.map((l) => sizes.get(l)!))), labels };
}

/**
 * `einsum(equation, tensors)`: Einstein summation over the labelled dims of the operands.
 *
 * @example
 * ```ts
 * import { einsum, tensor } from '../../mod.ts';
 * einsum('ij,jk->ik', [tensor([[1, 2]]), tensor([[3], [4]])]).tolist(); // [[11]]
 * ```
 */
export function einsum(equation: string, tensors: readonly Tensor[], _path: readonly number[] | null): Tensor {
  if (tensors.length === 0) throw new RuntimeError('einsum(): must provide at least one operand');
  const { inputs, output } = parse(equation, tensors);
  using temps = new Temporaries();
  // The common size of every label (size-1 dims broadcast).
  const sizes = new Map<Label, number>();
  inputs.forEach((labels, i) =>
    labels.forEach((l, d) => {
      const s = tensors[i].shape[d], prev = sizes.get(l);
      if (prev === undefined || prev === 1) sizes.set(l, s);
      else if (s !== 1 && s !== prev) {
        throw new RuntimeError(
          `einsum(): operands do not broadcast with remapped shapes (original->remapped): subscript ${name(l)} ` +
            `has size ${s} for operand ${i} which does not broadcast with previously seen size ${prev}`,
        );
      }
    })
  );
  let ops: Operand[] = inputs.map((labels, i) => diagonals({ t: tensors[i], labels }, temps));
  // Sum early what only one operand holds and the output does not need.
  const needed = (skip: number) => {
    const s = new Set<Label>(output);
    ops.forEach((o, j) => j !== skip && o.labels.forEach((l) => s.add(l)));
    return s;
  };
  ops = ops.map((o, i) => {
    const need = needed(i);
    return sumOut(o, new Set(o.labels.filter((l) => !need.has(l))), temps);
  });
  let acc = ops[0];
  for (let i = 1; i < ops.length; i++) {
    const keep = new Set<Label>(output);
    for (let j = i + 1; j < ops.length; j++) ops[j].labels.forEach((l) => keep.add(l));
    let next = ops[i];
    // Labels of one side that the other does not hold and nothing later needs are summed first.
    const drop = (o: Operand, other: Operand) =>
      new Set(o.labels.filter((l) => !keep.has(l) && !other.labels.includes(l)));
    acc = sumOut(acc, drop(acc, next), temps);
    next = sumOut(next, drop(next, acc), temps);
    acc = contract(acc, next, keep, sizes, temps);
  }
  acc = sumOut(acc, new Set(acc.labels.filter((l) => !output.includes(l))), temps);
  // Output labels that only broadcast (size from another operand) are already there; permute into place.
  const perm = output.map((l) => acc.labels.indexOf(l));
  let result = acc.t;
  if (perm.some((p, i) => p !== i)) result = temps.track(result.permute(perm));
  const finalShape = output.map((l) => sizes.get(l)!);
  if (result.shape.some((s, i) => s !== finalShape[i])) result = temps.track(result.expand(finalShape));
  return tensors.includes(result) ? result.clone() : temps.keep(result);
}
