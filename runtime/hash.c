/* hash.c: SHA-256 (FIPS 180-4), for kernel-cache keys and entry checksums.
 * requires: nothing; keeps: no global state; breaks: nothing. */
#include <string.h>

#include "runtime.h"

static const uint32_t sha256_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static inline uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

static void sha256_block(uint32_t h[8], const uint8_t p[64]) {
  uint32_t w[64];
  for (int i = 0; i < 16; i++)
    w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
  for (int i = 16; i < 64; i++) {
    uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
    uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
  for (int i = 0; i < 64; i++) {
    uint32_t t1 = hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + sha256_k[i] + w[i];
    uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    hh = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
  }
  h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e; h[5] += f; h[6] += g; h[7] += hh;
}

void tl_sha256_init(tl_sha256_ctx *s) {
  static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  memcpy(s->h, iv, sizeof iv);
  s->nbytes = 0;
  s->nbuf = 0;
}

void tl_sha256_update(tl_sha256_ctx *s, const void *data, size_t n) {
  const uint8_t *p = data;
  s->nbytes += n;
  if (s->nbuf) {
    size_t take = 64 - s->nbuf < n ? 64 - s->nbuf : n;
    memcpy(s->buf + s->nbuf, p, take);
    s->nbuf += take; p += take; n -= take;
    if (s->nbuf < 64) return;
    sha256_block(s->h, s->buf);
    s->nbuf = 0;
  }
  for (; n >= 64; p += 64, n -= 64) sha256_block(s->h, p);
  memcpy(s->buf, p, n);
  s->nbuf = n;
}

void tl_sha256_final(tl_sha256_ctx *s, uint8_t out[32]) {
  uint64_t bits = s->nbytes * 8;
  uint8_t pad[72] = {0x80};
  /* pad to 56 mod 64, then the 64-bit big-endian bit count */
  size_t npad = (s->nbuf < 56 ? 56 : 120) - s->nbuf;
  for (int i = 0; i < 8; i++) pad[npad + i] = (uint8_t)(bits >> (56 - 8 * i));
  tl_sha256_update(s, pad, npad + 8);
  for (int i = 0; i < 8; i++) {
    out[4 * i] = (uint8_t)(s->h[i] >> 24); out[4 * i + 1] = (uint8_t)(s->h[i] >> 16);
    out[4 * i + 2] = (uint8_t)(s->h[i] >> 8); out[4 * i + 3] = (uint8_t)s->h[i];
  }
}

void tl_sha256(const void *data, size_t n, uint8_t out[32]) {
  tl_sha256_ctx s;
  tl_sha256_init(&s);
  tl_sha256_update(&s, data, n);
  tl_sha256_final(&s, out);
}

/* ---- entry checksum ----------------------------------------------------------------- *
 * Not cryptographic: it guards cache entries against corruption at memory
 * speed (SHA-256 here runs at ~200 MB/s, i.e. ~0.7 ms for a 140 KB cubin on
 * the warm path).  Four lanes each fold 8-byte words with
 *   lane = rotl(lane ^ (w * P1), 31) * P2,
 * a bijection of the lane for a fixed word and of the word for a fixed lane,
 * so changing any one word (any single flipped bit, any one corrupted
 * 8-byte block) always changes the result; the tail and the length are
 * folded in the same way. */
#define CK_P1 0x9E3779B185EBCA87ull
#define CK_P2 0xC2B2AE3D27D4EB4Full
static inline uint64_t ck_rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
static inline uint64_t ck_step(uint64_t lane, uint64_t w) { return ck_rotl(lane ^ (w * CK_P1), 31) * CK_P2; }

uint64_t tl_checksum64(const void *data, size_t n) {
  const uint8_t *p = data;
  uint64_t lane[4] = {0x243F6A8885A308D3ull, 0x13198A2E03707344ull, 0xA4093822299F31D0ull, 0x082EFA98EC4E6C89ull};
  size_t i = 0;
  for (; i + 32 <= n; i += 32)
    for (int l = 0; l < 4; l++) {
      uint64_t w;
      memcpy(&w, p + i + 8 * l, 8);
      lane[l] = ck_step(lane[l], w);
    }
  uint64_t h = (uint64_t)n * CK_P1;
  for (int l = 0; l < 4; l++) h = ck_step(h, lane[l]);
  for (; i < n; i += 8) {
    uint64_t w = 0;
    memcpy(&w, p + i, n - i < 8 ? n - i : 8);
    h = ck_step(h, w);
  }
  /* final avalanche (a bijection) */
  h ^= h >> 33; h *= CK_P2; h ^= h >> 29; h *= CK_P1; h ^= h >> 32;
  return h;
}

/* Key fields: "name" NUL, an 8-byte length, the bytes, so that no two
 * different field lists serialize alike; a NULL string has the length
 * 2^64-1 and no bytes (so NULL and "" differ). */
void tl_sha256_field(tl_sha256_ctx *s, const char *name, const void *data, size_t n) {
  uint64_t len = n;
  tl_sha256_update(s, name, strlen(name) + 1);
  tl_sha256_update(s, &len, sizeof len);
  if (n) tl_sha256_update(s, data, n);
}

void tl_sha256_field_str(tl_sha256_ctx *s, const char *name, const char *v) {
  if (!v) {
    uint64_t none = UINT64_MAX;
    tl_sha256_update(s, name, strlen(name) + 1);
    tl_sha256_update(s, &none, sizeof none);
    return;
  }
  tl_sha256_field(s, name, v, strlen(v));
}

void tl_sha256_field_int(tl_sha256_ctx *s, const char *name, int64_t v) { tl_sha256_field(s, name, &v, sizeof v); }
