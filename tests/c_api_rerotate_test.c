/* The fused re-rotation of the C API (posenc_rope_rerotate, posenc/shift.h), compiled as C99
 * (-std=c99 -pedantic): against posenc_rope_rerotate_reference within the stated bounds (exact
 * way: B + 1 ulp of max(|x|, |y|) with the reference's rounding; tables: B + 4 + 1), in place equal
 * to out of place bit for bit, a table on one side equal to tables on both bit for bit, bf16 keys,
 * and the error paths (NULL pointers, bad enums, bad shapes, bad sources): the documented code,
 * a message naming the argument and its value, and nothing written.
 * (Bitwise equality with the C++ posenc::RerotateRope: rerotate_source_test.cc, CApiMatchesCpp.)
 * Prints one line per failed check and "N passed, N failed" at the end; exit code 1 on failure. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "posenc/posenc.h"

#include "c_check.h"

C_CHECK_COUNTERS;

enum { B = 2, S = 5, H = 2, D = 34, HALF = D / 2, N = B * S * H * D, MAXPOS = 6000 };

static float k0[N], k[N], out[N], ref[N], tab[N], one[N];
static uint16_t kb[N], kb_ref[N];
static double w_to[HALF];
static int64_t from_ids[B * S];

/* Largest |a - b| over all elements in ulp (f32) of max(|x|, |y|) of the element's input pair
 * (half pairs, every element rotated). */
static double max_ulp_apart(const float* a, const float* b, const float* in) {
  double worst = 0;
  int i;
  for (i = 0; i < N; ++i) {
    const int j = i % D;
    const int partner = j < HALF ? i + HALF : i - HALF;
    const double m = fabs(in[i]) > fabs(in[partner]) ? fabs(in[i]) : fabs(in[partner]);
    int e;
    double ulp, d;
    frexp(m, &e); /* m = f * 2^e, f in [0.5, 1): ulp_f32(m) = 2^(e - 24) */
    ulp = m == 0 ? ldexp(1.0, -149) : ldexp(1.0, (e - 24) < -149 ? -149 : e - 24);
    d = fabs((double)a[i] - (double)b[i]) / ulp;
    if (d > worst) worst = d;
  }
  return worst;
}

static void params_for(posenc_rerotate_params* p) {
  posenc_rerotate_params_init(p);
  p->from.attention_factor = 1.2;
  p->from.positions.kind = POSENC_POSITIONS_IDS64;
  p->from.positions.ids64 = from_ids;
  p->to.inv_freq = w_to;
  p->to.inv_freq_len = HALF;
  p->to.attention_factor = 1.1; /* ratio 0.9166 <= 1 */
  p->to.positions.kind = POSENC_POSITIONS_OFFSET;
  p->to.positions.offset = 4000;
}

static int unchanged(void) {
  return memcmp(k, k0, sizeof k) == 0;
}

int main(void) {
  posenc_tensor tk, tout, tref, ttab, tone, tkb, tkb_ref, bad;
  posenc_rerotate_params p, q;
  posenc_rope_table *from_table = NULL, *to_table = NULL, *narrow = NULL;
  static float sentinel[N];
  int i;
  for (i = 0; i < N; ++i) k0[i] = (float)((i * 37) % 101 - 50) / 17.0f;
  for (i = 0; i < HALF; ++i) w_to[i] = pow(1e4, -2.0 * i / D) / (1.0 + 0.37 * i);
  for (i = 0; i < B * S; ++i) from_ids[i] = 4090 + 211 * i;
  for (i = 0; i < N; ++i) sentinel[i] = -3.0f;
  memcpy(k, k0, sizeof k);
  tk = posenc_tensor_bshd(k, POSENC_F32, B, S, H, D);
  tout = posenc_tensor_bshd(out, POSENC_F32, B, S, H, D);
  tref = posenc_tensor_bshd(ref, POSENC_F32, B, S, H, D);
  ttab = posenc_tensor_bshd(tab, POSENC_F32, B, S, H, D);
  tone = posenc_tensor_bshd(one, POSENC_F32, B, S, H, D);

  /* The exact way: out of place, in place, reference. */
  params_for(&p);
  CHECK(posenc_rope_rerotate(&tk, &tout, &p) == POSENC_OK);
  CHECK(unchanged());
  memcpy(ref, k0, sizeof ref);
  CHECK(posenc_rope_rerotate_reference(&tref, NULL, &p) == POSENC_OK);
  CHECK(max_ulp_apart(out, ref, k0) <= 2.0 + 1.0);
  CHECK(max_ulp_apart(out, k0, k0) > 1000.0); /* it did rotate */
  memcpy(one, k0, sizeof one);
  p.max_threads = 1;
  CHECK(posenc_rope_rerotate(&tone, NULL, &p) == POSENC_OK);
  CHECK(memcmp(one, out, sizeof out) == 0);
  p.arithmetic = POSENC_ARITH_F32;
  memcpy(one, k0, sizeof one);
  CHECK(posenc_rope_rerotate(&tone, NULL, &p) == POSENC_OK);
  CHECK(max_ulp_apart(one, ref, k0) <= 3.0 + 1.0);

  /* Tables on both sides (the row way), one side a table: the same bits; within B + 4 + 1. */
  CHECK(posenc_rope_table_create(D, 10000.0, NULL, 0, 1.2, MAXPOS, &from_table) == POSENC_OK);
  CHECK(posenc_rope_table_create(D, 0.0, w_to, HALF, 1.1, MAXPOS, &to_table) == POSENC_OK);
  params_for(&p);
  p.from.source = POSENC_SOURCE_TABLE;
  p.from.table = from_table;
  p.to.source = POSENC_SOURCE_TABLE;
  p.to.table = to_table;
  memcpy(tab, k0, sizeof tab);
  CHECK(posenc_rope_rerotate(&ttab, NULL, &p) == POSENC_OK);
  memcpy(ref, k0, sizeof ref);
  CHECK(posenc_rope_rerotate_reference(&tref, NULL, &p) == POSENC_OK);
  CHECK(max_ulp_apart(tab, ref, k0) <= 2.0 + 4.0 + 1.0);
  q = p;
  q.to.source = POSENC_SOURCE_ON_THE_FLY;
  memcpy(one, k0, sizeof one);
  CHECK(posenc_rope_rerotate(&tone, NULL, &q) == POSENC_OK);
  CHECK(memcmp(one, tab, sizeof tab) == 0);

  /* bf16 keys (the f32 inputs truncated to bf16: any bf16 values will do): within the bf16 bound
   * 1 + 3 * 2^-16 ulp_bf16 of M of the exact result, and the reference rounded to bf16 within
   * ulp_bf16(M) of it (half an ulp of an output below 2M): 2 + 3 * 2^-16 apart at most. */
  params_for(&p);
  for (i = 0; i < N; ++i) {
    uint32_t u;
    memcpy(&u, &k0[i], 4);
    kb[i] = (uint16_t)(u >> 16);
  }
  memcpy(kb_ref, kb, sizeof kb);
  tkb = posenc_tensor_bshd(kb, POSENC_BF16, B, S, H, D);
  tkb_ref = posenc_tensor_bshd(kb_ref, POSENC_BF16, B, S, H, D);
  {
    static float in_w[N], got_w[N], ref_w[N];
    uint16_t kb_in[N];
    memcpy(kb_in, kb, sizeof kb);
    CHECK(posenc_rope_rerotate(&tkb, NULL, &p) == POSENC_OK);
    CHECK(posenc_rope_rerotate_reference(&tkb_ref, NULL, &p) == POSENC_OK);
    for (i = 0; i < N; ++i) {
      uint32_t a = (uint32_t)kb_in[i] << 16, b = (uint32_t)kb[i] << 16, c = (uint32_t)kb_ref[i] << 16;
      memcpy(&in_w[i], &a, 4);
      memcpy(&got_w[i], &b, 4);
      memcpy(&ref_w[i], &c, 4);
    }
    /* ulp_bf16 = 2^16 ulp_f32 */
    CHECK(max_ulp_apart(got_w, ref_w, in_w) <= (2.0 + 3.0 / 65536.0) * 65536.0);
    CHECK(max_ulp_apart(got_w, in_w, in_w) > 65536.0); /* it did rotate */
  }

  /* Errors: code, message naming the argument and its value, nothing written. */
  memcpy(k, k0, sizeof k);
  memcpy(out, sentinel, sizeof out);
  params_for(&p);
  CHECK_ERROR(posenc_rope_rerotate(NULL, &tout, &p), POSENC_INVALID_ARGUMENT, "k is null");
  CHECK_ERROR(posenc_rope_rerotate(&tk, &tout, NULL), POSENC_INVALID_ARGUMENT, "params is null");
  CHECK_ERROR(posenc_rope_rerotate_reference(&tk, NULL, NULL), POSENC_INVALID_ARGUMENT,
              "params is null");
  q = p;
  memset(&q.pairs, 0x7f, sizeof q.pairs);
  CHECK_ERROR(posenc_rope_rerotate(&tk, &tout, &q), POSENC_INVALID_ARGUMENT, "pairs = 2139062143");
  q = p;
  memset(&q.arithmetic, 0, sizeof q.arithmetic);
  ((unsigned char*)&q.arithmetic)[0] = 9;
  CHECK_ERROR(posenc_rope_rerotate(&tk, &tout, &q), POSENC_INVALID_ARGUMENT, "arithmetic = 9");
  q = p;
  memset(&q.from.positions.kind, 0, sizeof q.from.positions.kind);
  ((unsigned char*)&q.from.positions.kind)[0] = 42;
  CHECK_ERROR(posenc_rope_rerotate(&tk, &tout, &q), POSENC_INVALID_ARGUMENT,
              "params.from.positions.kind = 42");
  q = p;
  memset(&q.to.source, 0, sizeof q.to.source);
  ((unsigned char*)&q.to.source)[0] = 9;
  CHECK_ERROR(posenc_rope_rerotate(&tk, &tout, &q), POSENC_INVALID_ARGUMENT,
              "params.to.source = 9");
  q = p;
  q.from.source = POSENC_SOURCE_TABLE;
  q.from.table = NULL;
  CHECK_ERROR(posenc_rope_rerotate(&tk, &tout, &q), POSENC_INVALID_ARGUMENT,
              "params.from.table is null");
  q = p;
  q.to.source = POSENC_SOURCE_CACHE_BY_POSITION;
  q.to.cache_cos = sentinel;
  q.to.cache_sin = sentinel;
  q.to.cache_rows = 10;
  memset(&q.to.cache_dtype, 0, sizeof q.to.cache_dtype);
  ((unsigned char*)&q.to.cache_dtype)[0] = 7;
  CHECK_ERROR(posenc_rope_rerotate(&tk, &tout, &q), POSENC_INVALID_ARGUMENT,
              "to: source.cache.dtype = 7");
  q.to.cache_dtype = POSENC_F32; /* 10 rows do not cover position 4000 */
  CHECK_ERROR(posenc_rope_rerotate(&tk, &tout, &q), POSENC_OUT_OF_RANGE, "to: ");
  CHECK(posenc_rope_table_create(16, 10000.0, NULL, 0, 1.0, 16, &narrow) == POSENC_OK);
  q = p;
  q.to.source = POSENC_SOURCE_TABLE;
  q.to.table = narrow;
  CHECK_ERROR(posenc_rope_rerotate(&tk, &tout, &q), POSENC_INVALID_ARGUMENT,
              "to: source.table->rotary_dim() = 16: must equal rotary_dim = 34");
  q = p;
  q.rotary_dim = 7;
  CHECK_ERROR(posenc_rope_rerotate(&tk, &tout, &q), POSENC_INVALID_ARGUMENT, "rotary_dim = 7");
  q = p;
  q.to.inv_freq_len = 3;
  CHECK_ERROR(posenc_rope_rerotate(&tk, &tout, &q), POSENC_INVALID_ARGUMENT,
              "to: freqs.inv_freq_len = 3");
  q = p;
  q.from.attention_factor = 0.0;
  CHECK_ERROR(posenc_rope_rerotate(&tk, &tout, &q), POSENC_INVALID_ARGUMENT,
              "attention_factor = 0");
  q = p;
  q.from.positions.ids64 = NULL;
  CHECK_ERROR(posenc_rope_rerotate(&tk, &tout, &q), POSENC_INVALID_ARGUMENT,
              "from: positions.ids64 is null");
  bad = tout;
  bad.shape[3] = D - 2; /* out shape differs from k's */
  CHECK_ERROR(posenc_rope_rerotate(&tk, &bad, &p), POSENC_INVALID_ARGUMENT, "k_out.shape");
  bad = tk;
  memset(&bad.dtype, 0, sizeof bad.dtype);
  ((unsigned char*)&bad.dtype)[0] = 5;
  CHECK_ERROR(posenc_rope_rerotate(&bad, NULL, &p), POSENC_INVALID_ARGUMENT, "k.dtype = 5");
  bad = tk;
  bad.shape[1] = -1;
  CHECK_ERROR(posenc_rope_rerotate(&bad, NULL, &p), POSENC_INVALID_ARGUMENT, "k.shape[1] = -1");
  CHECK_ERROR(posenc_rope_rerotate_reference(&bad, NULL, &p), POSENC_INVALID_ARGUMENT,
              "k.shape[1] = -1");
  CHECK(unchanged());
  CHECK(memcmp(out, sentinel, sizeof out) == 0);

  posenc_rerotate_params_init(NULL); /* no crash */
  posenc_rope_table_destroy(from_table);
  posenc_rope_table_destroy(to_table);
  posenc_rope_table_destroy(narrow);
  printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
