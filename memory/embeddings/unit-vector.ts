// Unit-length vectors: every embedder hands the store vectors of length 1, so cosine is a dot product.

// Scales `v` to length 1 in place and returns it; throws on a zero, NaN or infinite vector.
export function toUnit(v: Float32Array): Float32Array {
  let s = 0;
  for (let i = 0; i < v.length; i++) s += v[i] * v[i];
  const n = Math.sqrt(s);
  if (!Number.isFinite(n) || n === 0) throw new Error(`Expected a vector with a finite, non-zero length, got ${n}`);
  for (let i = 0; i < v.length; i++) v[i] /= n;
  return v;
}

// Dot product of two vectors of one space; for unit vectors, their cosine.
export function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}
