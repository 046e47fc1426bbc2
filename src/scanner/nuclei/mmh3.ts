/**
 * MurmurHash3 x86 32-bit (Austin Appleby's public-domain algorithm), as used by nuclei's `mmh3()` helper and
 * by Shodan-style favicon hashes. Non-cryptographic.
 */

function mul32(a: number, b: number): number {
  return Math.imul(a, b);
}

function rotl32(x: number, r: number): number {
  return (x << r) | (x >>> (32 - r));
}

/** Unsigned 32-bit MurmurHash3_x86_32 of `bytes`. */
export function murmur3x86_32(bytes: Uint8Array, seed = 0): number {
  const c1 = 0xcc9e2d51;
  const c2 = 0x1b873593;
  const len = bytes.length;
  const nblocks = len >>> 2;
  let h1 = seed >>> 0;

  for (let i = 0; i < nblocks; i++) {
    const o = i * 4;
    let k1 = bytes[o] | (bytes[o + 1] << 8) | (bytes[o + 2] << 16) | (bytes[o + 3] << 24);
    k1 = mul32(k1, c1);
    k1 = rotl32(k1, 15);
    k1 = mul32(k1, c2);
    h1 ^= k1;
    h1 = rotl32(h1, 13);
    h1 = (mul32(h1, 5) + 0xe6546b64) | 0;
  }

  const tail = nblocks * 4;
  // The reference's fall-through `switch (len & 3)` over the 1–3 tail bytes, as cumulative conditions.
  const rest = len & 3;
  let k1 = 0;
  if (rest >= 3) k1 ^= bytes[tail + 2] << 16;
  if (rest >= 2) k1 ^= bytes[tail + 1] << 8;
  if (rest >= 1) {
    k1 ^= bytes[tail];
    k1 = mul32(k1, c1);
    k1 = rotl32(k1, 15);
    k1 = mul32(k1, c2);
    h1 ^= k1;
  }

  h1 ^= len;
  h1 ^= h1 >>> 16;
  h1 = mul32(h1, 0x85ebca6b);
  h1 ^= h1 >>> 13;
  h1 = mul32(h1, 0xc2b2ae35);
  h1 ^= h1 >>> 16;
  return h1 >>> 0;
}

/** Signed 32-bit result, like Python's `mmh3.hash()` and nuclei's `mmh3()` (which returns it as a string). */
export function mmh3Signed(bytes: Uint8Array, seed = 0): number {
  return murmur3x86_32(bytes, seed) | 0;
}
