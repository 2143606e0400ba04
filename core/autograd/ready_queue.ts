/**
 * The engine's ready queue: a binary max-heap of nodes keyed by sequence number, so the most recently
 * created ready node runs first (PyTorch's `ReadyQueue` ordering) in O(log n) per push and pop.
 *
 * @module
 */
import type { Node } from './node.ts';

/**
 * Nodes whose inputs are all computed, newest first.
 *
 * @example
 * ```ts
 * import { ReadyQueue } from './ready_queue.ts';
 * const queue = new ReadyQueue();
 * queue.isEmpty; // true
 * ```
 */
export class ReadyQueue {
  readonly #heap: Node[] = [];

  /** Whether no node is waiting. */
  get isEmpty(): boolean {
    return this.#heap.length === 0;
  }

  /** Number of waiting nodes. */
  get size(): number {
    return this.#heap.length;
  }

  /** Adds a ready node. */
  push(node: Node): void {
    const heap = this.#heap;
    let i = heap.length;
    heap.push(node);
    const key = node.sequenceNr;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (heap[parent].sequenceNr >= key) break;
      heap[i] = heap[parent];
      i = parent;
    }
    heap[i] = node;
  }

  /** Removes and returns the newest ready node; the queue must not be empty. */
  pop(): Node {
    const heap = this.#heap;
    const top = heap[0];
    const last = heap.pop()!;
    const n = heap.length;
    if (n > 0) {
      const key = last.sequenceNr;
      let i = 0;
      for (;;) {
        let child = 2 * i + 1;
        if (child >= n) break;
        if (child + 1 < n && heap[child + 1].sequenceNr > heap[child].sequenceNr) child++;
        if (heap[child].sequenceNr <= key) break;
        heap[i] = heap[child];
        i = child;
      }
      heap[i] = last;
    }
    return top;
  }
}
