// A program module run in attached workers by the tests in this folder (proxy mode).
import { add, type Tensor, tensor } from '../../mod.ts';

export function double(x: Tensor): Tensor {
  return x.mul(2);
}

export function scaleInPlace(x: Tensor, f: number): number {
  x.mul_(f);
  return x.version;
}
