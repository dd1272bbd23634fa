/* The ReRoPE part of the C API, compiled as C99 (-std=c99 -pedantic): scores against the C
 * reference, causal masking, a table (bitwise equal to on the fly), a config, and the error
 * paths (code, message naming the argument, nothing written).
 * Prints one line per failed check and "N passed, N failed" at the end; exit code 1 on failure. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "posenc/posenc.h"

#include "c_check.h"

C_CHECK_COUNTERS;

enum { B = 1, LQ = 3, LK = 40, HQ = 4, HK = 2, D = 16 };
#define NS (B * HQ * LQ * LK)

static float q[B * LQ * HQ * D], k[B * LK * HK * D];
static float s[NS], s_ref[NS], s_tab[NS];

static int all_equal(const float* v, size_t n, float x) {
  size_t i;
  for (i = 0; i < n; ++i) {
    if (memcmp(&v[i], &x, sizeof x) != 0) return 0;
  }
  return 1;
}

int main(void) {
  posenc_tensor tq, tk, ts, ts_ref, ts_tab;
  posenc_rerope_params p;
  posenc_rerope_table* table = NULL;
  posenc_config* config = NULL;
  posenc_config_desc desc;
  size_t i;
  int masked = 0;
  for (i = 0; i < sizeof q / sizeof q[0]; ++i) q[i] = (float)((int)(i % 13) - 6) * 0.25f;
  for (i = 0; i < sizeof k / sizeof k[0]; ++i) k[i] = (float)((int)(i % 7) - 3) * 0.5f;
  tq = posenc_tensor_bshd(q, POSENC_F32, B, LQ, HQ, D);
  tk = posenc_tensor_bshd(k, POSENC_F32, B, LK, HK, D);
  /* scores [batch, heads, q_len, k_len] */
  ts = posenc_tensor_bshd(s, POSENC_F32, B, HQ, LQ, LK);
  ts_ref = posenc_tensor_bshd(s_ref, POSENC_F32, B, HQ, LQ, LK);
  ts_tab = posenc_tensor_bshd(s_tab, POSENC_F32, B, HQ, LQ, LK);

  /* ReRoPE (cap) on the last 3 tokens, causal, softmax scale 1/4. */
  posenc_rerope_params_init(&p);
  p.mode = POSENC_DISTANCE_CAP;
  p.window = 8;
  p.q_positions.offset = LK - LQ;
  p.causal = 1;
  p.scale = 0.25;
  CHECK(posenc_rerope_scores(&tq, &tk, &ts, &p) == POSENC_OK);
  CHECK(posenc_rerope_scores_reference(&tq, &tk, &ts_ref, &p) == POSENC_OK);
  for (i = 0; i < NS; ++i) {
    if (isinf(s_ref[i])) {
      CHECK(isinf(s[i]) && s[i] < 0);
      ++masked;
    } else {
      CHECK(fabsf(s[i] - s_ref[i]) <= 1e-6f * (1.0f + fabsf(s_ref[i])));
    }
  }
  CHECK(masked == HQ * (1 + 2)); /* query i masks LQ - 1 - i keys */

  /* A table gives the same bits. */
  CHECK(posenc_rerope_table_create(&p, D, 1 << 20, &table) == POSENC_OK);
  p.table = table;
  CHECK(posenc_rerope_scores(&tq, &tk, &ts_tab, &p) == POSENC_OK);
  CHECK(memcmp(s, s_tab, sizeof s) == 0);
  p.table = NULL;

  /* Leaky and log maps, interleaved pairs, partial rotary. */
  p.mode = POSENC_DISTANCE_LEAKY;
  p.leak = 4.0;
  p.pairs = POSENC_PAIRS_INTERLEAVED;
  p.rotary_dim = 8;
  CHECK(posenc_rerope_scores(&tq, &tk, &ts, &p) == POSENC_OK);
  CHECK(posenc_rerope_scores_reference(&tq, &tk, &ts_ref, &p) == POSENC_OK);
  for (i = 0; i < NS; ++i) {
    if (!isinf(s_ref[i])) CHECK(fabsf(s[i] - s_ref[i]) <= 1e-6f * (1.0f + fabsf(s_ref[i])));
  }

  /* A config: head_dim 16, partial rotary 0.5 -> rotary_dim 8, theta 5e5. */
  posenc_config_desc_init(&desc);
  desc.head_dim = D;
  desc.partial_rotary_factor = 0.5;
  desc.rope_theta = 500000.0;
  CHECK(posenc_config_create(&desc, &config) == POSENC_OK);
  p.rotary_dim = 0;
  p.config = config;
  CHECK(posenc_rerope_scores(&tq, &tk, &ts, &p) == POSENC_OK);
  p.config = NULL;
  p.rotary_dim = 8;
  p.base = 500000.0;
  CHECK(posenc_rerope_scores(&tq, &tk, &ts_tab, &p) == POSENC_OK);
  CHECK(memcmp(s, s_tab, sizeof s) == 0);
  p.config = config;
  CHECK_ERROR(posenc_rerope_scores_reference(&tq, &tk, &ts, &p), POSENC_UNSUPPORTED,
              "params.config");
  CHECK_ERROR(posenc_rerope_table_create(&p, 8, 16, &table), POSENC_INVALID_ARGUMENT,
              "params.config");
  p.config = NULL;

  /* Errors: nothing written. */
  for (i = 0; i < NS; ++i) s[i] = -7.0f;
  p.mode = POSENC_DISTANCE_CAP;
  p.window = 0;
  CHECK_ERROR(posenc_rerope_scores(&tq, &tk, &ts, &p), POSENC_INVALID_ARGUMENT,
              "map.window = 0: must be > 0 for mode cap");
  p.window = 8;
  p.mode = (posenc_distance_mode)7;
  CHECK_ERROR(posenc_rerope_scores(&tq, &tk, &ts, &p), POSENC_INVALID_ARGUMENT, "map.mode = 7");
  p.mode = POSENC_DISTANCE_LEAKY;
  p.leak = 1.0;
  CHECK_ERROR(posenc_rerope_scores(&tq, &tk, &ts, &p), POSENC_INVALID_ARGUMENT, "map.leak = 1");
  p.leak = 4.0;
  p.k_positions.kind = (posenc_positions_kind)9;
  CHECK_ERROR(posenc_rerope_scores(&tq, &tk, &ts, &p), POSENC_INVALID_ARGUMENT,
              "params.k_positions.kind = 9");
  p.k_positions.kind = POSENC_POSITIONS_OFFSET;
  ts.shape[3] = LK - 1;
  CHECK_ERROR(posenc_rerope_scores(&tq, &tk, &ts, &p), POSENC_INVALID_ARGUMENT, "scores.shape");
  ts.shape[3] = LK;
  tk.dtype = POSENC_BF16;
  CHECK_ERROR(posenc_rerope_scores(&tq, &tk, &ts, &p), POSENC_INVALID_ARGUMENT, "k.dtype = bf16");
  tk.dtype = POSENC_F32;
  CHECK_ERROR(posenc_rerope_scores(&tq, &tk, &ts, NULL), POSENC_INVALID_ARGUMENT, "params is null");
  CHECK_ERROR(posenc_rerope_scores(NULL, &tk, &ts, &p), POSENC_INVALID_ARGUMENT, "q.data is null");
  CHECK_ERROR(posenc_rerope_table_create(&p, 8, 16, NULL), POSENC_INVALID_ARGUMENT, "out is null");
  CHECK(all_equal(s, NS, -7.0f));

  posenc_rerope_table_destroy(table);
  posenc_rerope_table_destroy(NULL);
  posenc_config_destroy(config);
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
