// An in-memory index of one model's vectors: unit length, packed in one Float32Array, searched by
// brute-force dot product (fast enough to 100k; nothing to build or keep in sync but appends).
export class VectorIndex {
  private ids: number[] = [];
  private pos = new Map<number, number>();
  private data: Float32Array;

  constructor(readonly model: string, readonly dim: number) {
    this.data = new Float32Array(dim * 1024);
  }

  get size(): number {
    return this.ids.length;
  }

  has(id: number): boolean {
    return this.pos.has(id);
  }

  // Stores a unit-length copy (replacing an earlier vector for the id).
  set(id: number, v: Float32Array): void {
    if (v.length !== this.dim) throw new Error(`Expected a ${this.dim}-d vector for ${this.model}, got ${v.length}-d`);
    let at = this.pos.get(id);
    if (at === undefined) {
      at = this.ids.length;
      if ((at + 1) * this.dim > this.data.length) {
        const grown = new Float32Array(this.data.length * 2);
        grown.set(this.data);
        this.data = grown;
      }
      this.ids.push(id);
      this.pos.set(id, at);
    }
    this.data.set(unit(v), at * this.dim);
  }

  // Drops an id's vector (a memory deleted for good): the last vector moves into its slot.
  delete(id: number): void {
    const at = this.pos.get(id);
    if (at === undefined) return;
    const last = this.ids.length - 1;
    if (at !== last) {
      this.data.copyWithin(at * this.dim, last * this.dim, (last + 1) * this.dim);
      this.ids[at] = this.ids[last];
      this.pos.set(this.ids[at], at);
    }
    this.ids.pop();
    this.pos.delete(id);
  }

  // The `n` nearest by cosine, best first.
  top(q: Float32Array, n: number, skip?: (id: number) => boolean): Array<{ id: number; score: number }> {
    const u = unit(q);
    const d = this.dim;
    const best: Array<{ id: number; score: number }> = [];
    let floor = -Infinity;
    for (let i = 0; i < this.ids.length; i++) {
      let s = 0;
      const o = i * d;
      for (let j = 0; j < d; j++) s += u[j] * this.data[o + j];
      if (best.length >= n && s <= floor) continue;
      const id = this.ids[i];
      if (skip?.(id)) continue;
      best.push({ id, score: s });
      if (best.length > n) {
        best.sort((a, b) => b.score - a.score);
        best.length = n;
        floor = best[n - 1].score;
      }
    }
    return best.sort((a, b) => b.score - a.score);
  }
}

// A unit-length copy; a zero vector stays zero.
export function unit(v: Float32Array): Float32Array {
  let n = 0;
  for (let i = 0; i < v.length; i++) n += v[i] * v[i];
  n = Math.sqrt(n);
  const out = new Float32Array(v.length);
  if (n > 0) for (let i = 0; i < v.length; i++) out[i] = v[i] / n;
  return out;
}

export function toBlob(v: Float32Array): Buffer {
  return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
}

export function fromBlob(b: Buffer): Float32Array {
  const copy = new Float32Array(b.byteLength / 4);
  new Uint8Array(copy.buffer).set(b);
  return copy;
}
