/* The C API, compiled as C99 (-std=c99 -pedantic): every entry point and every error path.
 * Prints one line per failed check and "N passed, N failed" at the end; exit code 1 on failure. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "posenc/posenc.h"

#include "c_check.h"

C_CHECK_COUNTERS;

static int all_equal(const float* v, size_t n, float x) {
  size_t i;
  for (i = 0; i < n; ++i) {
    if (v[i] != x) return 0;
  }
  return 1;
}

static void test_rope(void) {
  enum { T = 4, HQ = 4, HK = 2, D = 8 };
  float q[T * HQ * D], k[T * HK * D], q_ref[T * HQ * D], out[T * HQ * D];
  size_t i;
  posenc_tensor tq, tk, tref, tout;
  posenc_rope_params p;
  for (i = 0; i < T * HQ * D; ++i) q[i] = q_ref[i] = (float)((int)(i % 13) - 6) * 0.25f;
  for (i = 0; i < T * HK * D; ++i) k[i] = (float)((int)(i % 7) - 3) * 0.5f;
  tq = posenc_tensor_bshd(q, POSENC_F32, 1, T, HQ, D);
  tk = posenc_tensor_bshd(k, POSENC_F32, 1, T, HK, D);
  tref = posenc_tensor_bshd(q_ref, POSENC_F32, 1, T, HQ, D);
  posenc_rope_params_init(&p);
  p.positions.offset = 100;
  CHECK(posenc_rope_apply(&tq, NULL, &tk, NULL, &p) == POSENC_OK);
  CHECK(posenc_rope_apply_reference(&tref, NULL, NULL, NULL, &p) == POSENC_OK);
  for (i = 0; i < T * HQ * D; ++i) CHECK(fabsf(q[i] - q_ref[i]) <= 4e-7f);
  /* inverse undoes it */
  p.inverse = 1;
  CHECK(posenc_rope_apply(&tq, NULL, NULL, NULL, &p) == POSENC_OK);
  CHECK(fabsf(q[5] - (float)((int)(5 % 13) - 6) * 0.25f) <= 1e-6f);
  p.inverse = 0;

  /* errors: nothing written */
  for (i = 0; i < T * HQ * D; ++i) out[i] = -3.0f;
  tout = posenc_tensor_bshd(out, POSENC_F32, 1, T, HQ, D);
  p.rotary_dim = 7;
  CHECK_ERROR(posenc_rope_apply(&tq, &tout, NULL, NULL, &p), POSENC_INVALID_ARGUMENT, "rotary_dim = 7");
  CHECK(all_equal(out, T * HQ * D, -3.0f));
  p.rotary_dim = 0;
  CHECK_ERROR(posenc_rope_apply(&tq, &tout, NULL, NULL, NULL), POSENC_INVALID_ARGUMENT, "params is null");
  CHECK_ERROR(posenc_rope_apply(NULL, NULL, NULL, NULL, &p), POSENC_INVALID_ARGUMENT,
              "q.data and k.data are both null");
  tout.strides[3] = 2;
  CHECK_ERROR(posenc_rope_apply(&tq, &tout, NULL, NULL, &p), POSENC_INVALID_ARGUMENT, "q_out.strides[3] = 2");
  tout.strides[3] = 1;
  p.base = -1.0;
  CHECK_ERROR(posenc_rope_apply(&tq, &tout, NULL, NULL, &p), POSENC_INVALID_ARGUMENT, "freqs.base = -1");
  p.base = 10000.0;
  p.positions.kind = (posenc_positions_kind)9;
  CHECK_ERROR(posenc_rope_apply(&tq, &tout, NULL, NULL, &p), POSENC_INVALID_ARGUMENT, "positions.kind = 9");
  p.positions.kind = POSENC_POSITIONS_IDS64;
  CHECK_ERROR(posenc_rope_apply(&tq, &tout, NULL, NULL, &p), POSENC_INVALID_ARGUMENT, "positions.ids64 is null");
  p.positions.kind = POSENC_POSITIONS_OFFSET;
  p.source = (posenc_source)8;
  CHECK_ERROR(posenc_rope_apply(&tq, &tout, NULL, NULL, &p), POSENC_INVALID_ARGUMENT, "params.source = 8");
  p.source = POSENC_SOURCE_TABLE;
  CHECK_ERROR(posenc_rope_apply(&tq, &tout, NULL, NULL, &p), POSENC_INVALID_ARGUMENT, "params.table is null");
  p.source = POSENC_SOURCE_CACHE_BY_POSITION;
  CHECK_ERROR(posenc_rope_apply(&tq, &tout, NULL, NULL, &p), POSENC_INVALID_ARGUMENT, "source.cache.cos is null");
  CHECK(all_equal(out, T * HQ * D, -3.0f));
  CHECK(strcmp(posenc_status_name(POSENC_OUT_OF_RANGE), "out_of_range") == 0);
}

/* A prepared call: each step writes the bytes posenc_rope_apply writes; bad positions fail and
 * write nothing; create fails as posenc_rope_apply does and leaves *out alone. */
static void test_rope_call(void) {
  enum { HQ = 4, HK = 2, D = 16, STEPS = 3 };
  float q[HQ * D], k[HK * D], q2[HQ * D], k2[HK * D], q_out[HQ * D], q_out2[HQ * D];
  size_t i;
  int step;
  posenc_tensor tq, tk, tq2, tk2, to, to2;
  posenc_rope_params p;
  posenc_rope_table* table = NULL;
  posenc_rope_call* call = NULL;
  posenc_rope_call* untouched = NULL;
  posenc_positions pos;
  tq = posenc_tensor_bshd(q, POSENC_F32, 1, 1, HQ, D);
  tk = posenc_tensor_bshd(k, POSENC_F32, 1, 1, HK, D);
  to = posenc_tensor_bshd(q_out, POSENC_F32, 1, 1, HQ, D);
  tq2 = posenc_tensor_bshd(q2, POSENC_F32, 1, 1, HQ, D);
  tk2 = posenc_tensor_bshd(k2, POSENC_F32, 1, 1, HK, D);
  to2 = posenc_tensor_bshd(q_out2, POSENC_F32, 1, 1, HQ, D);
  CHECK(posenc_rope_table_create(D, 10000.0, NULL, 0, 1.0, 64, &table) == POSENC_OK);
  posenc_rope_params_init(&p);
  p.source = POSENC_SOURCE_TABLE;
  p.table = table;
  p.arithmetic = POSENC_ARITH_F32;
  CHECK(posenc_rope_call_create(&tq, &to, &tk, NULL, &p, &call) == POSENC_OK);
  for (step = 0; step < STEPS; ++step) {
    for (i = 0; i < HQ * D; ++i) q[i] = q2[i] = (float)((int)((i + step) % 11) - 5) * 0.375f;
    for (i = 0; i < HK * D; ++i) k[i] = k2[i] = (float)((int)((i * 3 + step) % 7) - 3) * 0.5f;
    memset(&pos, 0, sizeof(pos));
    pos.kind = POSENC_POSITIONS_OFFSET;
    pos.offset = 10 + 17 * step;
    CHECK(posenc_rope_call_apply(call, &pos) == POSENC_OK);
    p.positions = pos;
    CHECK(posenc_rope_apply(&tq2, &to2, &tk2, NULL, &p) == POSENC_OK);
    CHECK(memcmp(q_out, q_out2, sizeof(q_out)) == 0);
    CHECK(memcmp(k, k2, sizeof(k)) == 0);
    CHECK(memcmp(q, q2, sizeof(q)) == 0); /* out of place: q is read only */
  }
  /* errors: nothing written */
  for (i = 0; i < HQ * D; ++i) q_out[i] = -3.0f;
  pos.offset = 64; /* the table has rows [0, 64) */
  CHECK_ERROR(posenc_rope_call_apply(call, &pos), POSENC_OUT_OF_RANGE,
              "outside the table's rows [0, 64)");
  pos.kind = (posenc_positions_kind)9;
  CHECK_ERROR(posenc_rope_call_apply(call, &pos), POSENC_INVALID_ARGUMENT, "positions.kind = 9");
  pos.kind = POSENC_POSITIONS_IDS32;
  CHECK_ERROR(posenc_rope_call_apply(call, &pos), POSENC_INVALID_ARGUMENT,
              "positions.ids32 is null");
  CHECK_ERROR(posenc_rope_call_apply(call, NULL), POSENC_INVALID_ARGUMENT, "positions is null");
  CHECK_ERROR(posenc_rope_call_apply(NULL, &pos), POSENC_INVALID_ARGUMENT, "call is null");
  CHECK(all_equal(q_out, HQ * D, -3.0f));
  p.rotary_dim = 7;
  CHECK_ERROR(posenc_rope_call_create(&tq, &to, &tk, NULL, &p, &untouched), POSENC_INVALID_ARGUMENT,
              "rotary_dim = 7");
  CHECK(untouched == NULL);
  p.rotary_dim = 0;
  CHECK_ERROR(posenc_rope_call_create(&tq, &to, &tk, NULL, &p, NULL), POSENC_INVALID_ARGUMENT,
              "out is null");
  CHECK(all_equal(q_out, HQ * D, -3.0f));
  posenc_rope_call_destroy(call);
  posenc_rope_call_destroy(NULL);
  posenc_rope_table_destroy(table);
}

static void test_tables_and_caches(void) {
  enum { T = 3, H = 2, D = 16 };
  float a[T * H * D], b[T * H * D];
  uint16_t cos16[64 * 8], sin16[64 * 8];
  size_t i;
  posenc_rope_table* table = NULL;
  posenc_tensor ta, tb;
  posenc_rope_params p;
  for (i = 0; i < T * H * D; ++i) a[i] = b[i] = (float)i / 50.0f - 1.0f;
  ta = posenc_tensor_bshd(a, POSENC_F32, 1, T, H, D);
  tb = posenc_tensor_bshd(b, POSENC_F32, 1, T, H, D);
  CHECK(posenc_rope_table_create(D, 10000.0, NULL, 0, 1.0, 64, &table) == POSENC_OK);
  posenc_rope_params_init(&p);
  p.positions.offset = 60;
  CHECK(posenc_rope_apply(&ta, NULL, NULL, NULL, &p) == POSENC_OK);
  p.source = POSENC_SOURCE_TABLE;
  p.table = table;
  CHECK(posenc_rope_apply(&tb, NULL, NULL, NULL, &p) == POSENC_OK);
  CHECK(memcmp(a, b, sizeof(a)) == 0); /* table == on the fly, bit for bit */
  p.positions.offset = 62;             /* rows 62..64: 64 is outside */
  CHECK_ERROR(posenc_rope_apply(&tb, NULL, NULL, NULL, &p), POSENC_OUT_OF_RANGE, "outside the table's rows [0, 64)");
  CHECK_ERROR(posenc_rope_table_create(7, 10000.0, NULL, 0, 1.0, 64, &table), POSENC_INVALID_ARGUMENT,
              "rotary_dim = 7");
  CHECK_ERROR(posenc_rope_table_create(8, 10000.0, NULL, 0, 1.0, 64, NULL), POSENC_INVALID_ARGUMENT, "out is null");
  posenc_rope_table_destroy(table);
  posenc_rope_table_destroy(NULL);

  /* POSENC_ARITH_FMA_CHAIN: a table created for it gives the on-the-fly bits; a plain one is
   * refused by name, writing nothing. */
  {
    posenc_rope_table* chain = NULL;
    posenc_rope_table* plain = NULL;
    for (i = 0; i < T * H * D; ++i) a[i] = b[i] = (float)i / 50.0f - 1.0f;
    CHECK(posenc_rope_table_create_for(D, 10000.0, NULL, 0, 1.0, 64, POSENC_ARITH_FMA_CHAIN,
                                       &chain) == POSENC_OK);
    CHECK(posenc_rope_table_create_for(D, 10000.0, NULL, 0, 1.0, 64, POSENC_ARITH_F64, &plain) ==
          POSENC_OK);
    CHECK_ERROR(posenc_rope_table_create_for(D, 10000.0, NULL, 0, 1.0, 64,
                                             (posenc_arithmetic)5, &table),
                POSENC_INVALID_ARGUMENT, "arithmetic = 5: not a RotationArithmetic");
    posenc_rope_params_init(&p);
    p.arithmetic = POSENC_ARITH_FMA_CHAIN;
    p.positions.offset = 40;
    CHECK(posenc_rope_apply(&ta, NULL, NULL, NULL, &p) == POSENC_OK);
    p.source = POSENC_SOURCE_TABLE;
    p.table = chain;
    CHECK(posenc_rope_apply(&tb, NULL, NULL, NULL, &p) == POSENC_OK);
    CHECK(memcmp(a, b, sizeof(a)) == 0);
    p.table = plain;
    CHECK_ERROR(posenc_rope_apply(&tb, NULL, NULL, NULL, &p), POSENC_INVALID_ARGUMENT,
                "arithmetic = kFmaChain: source.table has no lo rows");
    CHECK(memcmp(a, b, sizeof(a)) == 0);
    posenc_rope_table_destroy(chain);
    posenc_rope_table_destroy(plain);
  }

  /* f16 caches with f32 q */
  {
    float c32[64 * 8], s32[64 * 8];
    posenc_rope_table* t2 = NULL;
    CHECK(posenc_rope_table_create(D, 10000.0, NULL, 0, 1.0, 64, &t2) == POSENC_OK);
    for (i = 0; i < 64 * 8; ++i) {
      c32[i] = cosf((float)(i / 8) * powf(10000.0f, -2.0f * (float)(i % 8) / 16.0f));
      s32[i] = sinf((float)(i / 8) * powf(10000.0f, -2.0f * (float)(i % 8) / 16.0f));
    }
    CHECK(posenc_convert_from_f32(c32, 64 * 8, POSENC_F16, cos16) == POSENC_OK);
    CHECK(posenc_convert_from_f32(s32, 64 * 8, POSENC_F16, sin16) == POSENC_OK);
    posenc_rope_params_init(&p);
    p.source = POSENC_SOURCE_CACHE_BY_POSITION;
    p.cache_cos = cos16;
    p.cache_sin = sin16;
    p.cache_dtype = POSENC_F16;
    p.cache_rows = 64;
    p.positions.offset = 10;
    CHECK(posenc_rope_apply(&ta, NULL, NULL, NULL, &p) == POSENC_OK);
    p.cache_rows = 0;
    CHECK_ERROR(posenc_rope_apply(&ta, NULL, NULL, NULL, &p), POSENC_INVALID_ARGUMENT, "source.cache.rows = 0");
    posenc_rope_table_destroy(t2);
  }
}

static void test_configs(void) {
  const char* json =
      "{\"hidden_size\": 4096, \"num_attention_heads\": 32, \"rope_theta\": 500000.0,"
      " \"rope_scaling\": {\"rope_type\": \"llama3\", \"factor\": 8.0, \"low_freq_factor\": 1.0,"
      " \"high_freq_factor\": 4.0, \"original_max_position_embeddings\": 8192}}";
  posenc_config* config = NULL;
  posenc_config_desc desc;
  double inv[64], factor = 0;
  int64_t rotary = 0;
  CHECK(posenc_config_parse(json, &config) == POSENC_OK);
  {  /* a config has no prepared call (its frequencies may depend on the positions) */
    float qc[128];
    posenc_tensor tqc = posenc_tensor_bshd(qc, POSENC_F32, 1, 1, 1, 128);
    posenc_rope_params pc;
    posenc_rope_call* call = NULL;
    memset(qc, 0, sizeof(qc));
    posenc_rope_params_init(&pc);
    pc.config = config;
    CHECK_ERROR(posenc_rope_call_create(&tqc, NULL, NULL, NULL, &pc, &call), POSENC_UNSUPPORTED,
                "params.config: a config's frequencies may depend on the positions");
    CHECK(call == NULL);
  }
  CHECK(posenc_config_frequencies(config, 0, inv, 64, &rotary, &factor) == POSENC_OK);
  CHECK(rotary == 128 && factor == 1.0 && inv[0] == 1.0);
  CHECK_ERROR(posenc_config_frequencies(config, 0, inv, 10, NULL, NULL), POSENC_INVALID_ARGUMENT, "capacity = 10");
  {
    enum { T = 2, D = 128 };
    static float q[T * D];
    posenc_tensor tq = posenc_tensor_bshd(q, POSENC_F32, 1, T, 1, D);
    posenc_rope_params p;
    posenc_rope_params_init(&p);
    p.config = config;
    q[0] = 1.0f;
    CHECK(posenc_rope_apply(&tq, NULL, NULL, NULL, &p) == POSENC_OK);
    CHECK_ERROR(posenc_rope_apply_reference(&tq, NULL, NULL, NULL, &p), POSENC_UNSUPPORTED, "params.config");
  }
  posenc_config_destroy(config);
  config = NULL;
  CHECK_ERROR(posenc_config_parse("{\"head_dim\": 64, \"rope_scaling\": {\"rope_type\": \"linear\"}}", &config),
              POSENC_INVALID_ARGUMENT, "rope_scaling.factor: missing");
  CHECK(config == NULL);
  CHECK_ERROR(posenc_config_parse(NULL, &config), POSENC_INVALID_ARGUMENT, "json_text is null");
  CHECK_ERROR(posenc_config_load("/nonexistent/config.json", &config), POSENC_INVALID_ARGUMENT, "cannot open");
  CHECK_ERROR(posenc_config_load(NULL, &config), POSENC_INVALID_ARGUMENT, "path is null");
  posenc_config_desc_init(&desc);
  desc.rope_type = POSENC_ROPE_YARN;
  desc.head_dim = 64;
  desc.has_factor = 1;
  desc.factor = 4.0;
  desc.original_max_position_embeddings = 4096;
  CHECK(posenc_config_create(&desc, &config) == POSENC_OK);
  CHECK(posenc_config_frequencies(config, 0, NULL, 0, &rotary, &factor) == POSENC_OK);
  CHECK(rotary == 64 && fabs(factor - (0.1 * log(4.0) + 1.0)) < 1e-15);
  posenc_config_destroy(config);
  desc.head_dim = 0;
  CHECK_ERROR(posenc_config_create(&desc, &config), POSENC_INVALID_ARGUMENT, "head_dim = 0");
  desc.rope_type = (posenc_rope_type)42;
  CHECK_ERROR(posenc_config_create(&desc, &config), POSENC_INVALID_ARGUMENT, "desc.rope_type = 42");
  CHECK_ERROR(posenc_config_create(NULL, &config), POSENC_INVALID_ARGUMENT, "desc is null");
  CHECK_ERROR(posenc_config_frequencies(NULL, 0, NULL, 0, NULL, NULL), POSENC_INVALID_ARGUMENT, "config is null");
}

/* Models: per-layer RoPE (Gemma 3: sliding 1e4 / full 1e6 with linear 8), NoPE layers, pair
 * layouts from the config, the DeepSeek softmax factor, describe and the HF dynamic rule. */
static void test_models(void) {
  const char* gemma =
      "{\"model_type\": \"gemma3_text\", \"head_dim\": 8, \"num_hidden_layers\": 6,"
      " \"rope_scaling\": {\"rope_type\": \"linear\", \"factor\": 8.0}}";
  const char* smol =
      "{\"model_type\": \"smollm3\", \"head_dim\": 8, \"num_hidden_layers\": 4, \"no_rope_layers\": [1, 1, 0, 1]}";
  posenc_model* model = NULL;
  const posenc_config* full = NULL;
  posenc_config* single = NULL;
  posenc_config_desc desc;
  int64_t index = 0, rotary = 0;
  double inv[4], factor = 0;
  CHECK(posenc_model_parse(gemma, &model) == POSENC_OK);
  CHECK(posenc_model_num_layers(model) == 6);
  CHECK(posenc_model_num_layer_types(model) == 2);
  CHECK(strcmp(posenc_model_layer_type_name(model, 0), "sliding_attention") == 0);
  CHECK(strcmp(posenc_model_layer_type_name(model, 1), "full_attention") == 0);
  CHECK(posenc_model_layer_type_name(model, 2) == NULL);
  CHECK(posenc_model_layer_type(model, 5, &index) == POSENC_OK && index == 1);
  CHECK(posenc_model_layer_type(model, 0, &index) == POSENC_OK && index == 0);
  CHECK_ERROR(posenc_model_layer_type(model, 6, &index), POSENC_INVALID_ARGUMENT, "layer = 6");
  CHECK(posenc_model_config(model, "full_attention", &full) == POSENC_OK && full != NULL);
  CHECK(posenc_config_describe(full, &desc) == POSENC_OK);
  CHECK(desc.rope_type == POSENC_ROPE_LINEAR && desc.rope_theta == 1e6 && desc.factor == 8.0 && desc.has_factor);
  CHECK(desc.pairs == POSENC_PAIRS_HALF && desc.head_dim == 8);
  CHECK(posenc_model_frequencies(model, "sliding_attention", 0, inv, 4, &rotary, &factor) == POSENC_OK);
  CHECK(rotary == 8 && inv[0] == 1.0 && fabs(inv[1] - 0.1) < 1e-16 && factor == 1.0);
  CHECK(posenc_model_frequencies(model, "full_attention", 0, inv, 4, NULL, NULL) == POSENC_OK && inv[0] == 0.125);
  CHECK_ERROR(posenc_model_config(model, "global", &full), POSENC_INVALID_ARGUMENT,
              "(sliding_attention, full_attention)");
  CHECK(posenc_model_softmax_scale_factor(model) == 1.0);
  {
    enum { T = 2, D = 8 };
    float a[T * D], b[T * D];
    int i;
    posenc_tensor ta = posenc_tensor_bshd(a, POSENC_F32, 1, T, 1, D);
    posenc_tensor tb = posenc_tensor_bshd(b, POSENC_F32, 1, T, 1, D);
    posenc_rope_params p;
    for (i = 0; i < T * D; ++i) a[i] = b[i] = (float)(i % 5) - 2.0f;
    posenc_rope_params_init(&p);
    CHECK(p.pairs == POSENC_PAIRS_FROM_CONFIG && p.seq_len == 0);
    p.positions.offset = 100;
    CHECK(posenc_model_rope_apply(&ta, NULL, NULL, NULL, model, "full_attention", &p) == POSENC_OK);
    CHECK(posenc_model_rope_apply_layer(&tb, NULL, NULL, NULL, model, 5, &p) == POSENC_OK);
    CHECK(memcmp(a, b, sizeof a) == 0);
    CHECK_ERROR(posenc_model_rope_apply(&ta, NULL, NULL, NULL, model, NULL, &p), POSENC_INVALID_ARGUMENT,
                "layer_type is null");
    p.config = full;
    CHECK_ERROR(posenc_model_rope_apply(&ta, NULL, NULL, NULL, model, "full_attention", &p),
                POSENC_INVALID_ARGUMENT, "params.config: must be NULL");
  }
  /* The single-config loader refuses a model whose layer types differ. */
  CHECK_ERROR(posenc_config_parse(gemma, &single), POSENC_INVALID_ARGUMENT, "LoadHfModel");
  posenc_model_destroy(model);
  model = NULL;
  CHECK(posenc_model_parse(smol, &model) == POSENC_OK);
  CHECK(posenc_model_layer_type(model, 2, &index) == POSENC_OK && index == -1);
  CHECK(posenc_model_layer_type(model, 3, &index) == POSENC_OK && index == 0);
  {
    float x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    posenc_tensor tx = posenc_tensor_bshd(x, POSENC_F32, 1, 1, 1, 8);
    posenc_rope_params p;
    posenc_rope_params_init(&p);
    CHECK_ERROR(posenc_model_rope_apply_layer(&tx, NULL, NULL, NULL, model, 2, &p), POSENC_INVALID_ARGUMENT,
                "has no RoPE");
    CHECK(x[0] == 1 && x[7] == 8);
  }
  posenc_model_destroy(model);
  model = NULL;
  CHECK_ERROR(posenc_model_parse("{\"head_dim\": 1e300}", &model), POSENC_INVALID_ARGUMENT, "head_dim");
  CHECK(model == NULL);
  CHECK_ERROR(posenc_model_load("/nonexistent/config.json", &model), POSENC_INVALID_ARGUMENT, "cannot open");
  CHECK_ERROR(posenc_model_parse(NULL, &model), POSENC_INVALID_ARGUMENT, "json_text is null");
  CHECK(posenc_model_num_layers(NULL) == 0 && posenc_model_layer_type_name(NULL, 0) == NULL);
  /* DeepSeek-style YaRN: the softmax factor mscale(40, 1)^2. */
  CHECK(posenc_model_parse("{\"model_type\": \"deepseek_v3\", \"qk_rope_head_dim\": 64, \"max_position_embeddings\": 163840,"
                           " \"rope_scaling\": {\"type\": \"yarn\", \"factor\": 40, \"mscale\": 1.0, \"mscale_all_dim\": 1.0,"
                           " \"original_max_position_embeddings\": 4096}}", &model) == POSENC_OK);
  CHECK(fabs(posenc_model_softmax_scale_factor(model) - (0.1 * log(40.0) + 1) * (0.1 * log(40.0) + 1)) < 1e-14);
  CHECK(posenc_model_config(model, "full_attention", &full) == POSENC_OK);
  CHECK(posenc_config_describe(full, &desc) == POSENC_OK && desc.pairs == POSENC_PAIRS_INTERLEAVED);
  posenc_model_destroy(model);
  /* Config descriptions round-trip (M-RoPE spec included), and HF's dynamic rule. */
  CHECK(posenc_config_parse("{\"head_dim\": 128, \"rope_scaling\": {\"type\": \"mrope\", \"mrope_section\": [16, 24, 24]}}",
                            &single) == POSENC_OK);
  CHECK(posenc_config_describe(single, &desc) == POSENC_OK);
  CHECK(desc.mrope_section_len == 3 && desc.mrope_section[1] == 24 && desc.mrope_interleaved == 0);
  posenc_config_destroy(single);
  single = NULL;
  desc.pairs = (posenc_pairs)POSENC_PAIRS_FROM_CONFIG;
  CHECK_ERROR(posenc_config_create(&desc, &single), POSENC_INVALID_ARGUMENT, "desc.pairs = 2");
  posenc_config_desc_init(&desc);
  desc.rope_type = POSENC_ROPE_DYNAMIC;
  desc.head_dim = 16;
  desc.has_factor = 1;
  desc.factor = 2.0;
  desc.max_position_embeddings = 64;
  CHECK(posenc_config_create(&desc, &single) == POSENC_OK);
  CHECK(posenc_config_hf_dynamic_length(single, 0, 10) == 64);
  CHECK(posenc_config_hf_dynamic_length(single, 100, 80) == 100);
  CHECK(posenc_config_hf_dynamic_length(single, 100, 63) == 64);
  CHECK(posenc_config_hf_dynamic_length(NULL, 0, 10) == -1);
  posenc_config_destroy(single);
  desc.rope_type = POSENC_ROPE_PROPORTIONAL;
  desc.has_factor = 0;
  desc.head_dim = 16;
  desc.partial_rotary_factor = 0.25;
  CHECK(posenc_config_create(&desc, &single) == POSENC_OK);
  {
    double pinv[8];
    CHECK(posenc_config_frequencies(single, 0, pinv, 8, &rotary, NULL) == POSENC_OK);
    CHECK(rotary == 16 && pinv[0] == 1.0 && pinv[1] > 0 && pinv[2] == 0.0 && pinv[7] == 0.0);
  }
  posenc_config_destroy(single);
}

static void test_sinusoidal(void) {
  enum { N = 4, D = 4 };
  float pe[N * D], x[N * D];
  posenc_sinusoidal_params p;
  posenc_embedding e, ex;
  posenc_sinusoidal_table* table = NULL;
  size_t i;
  posenc_sinusoidal_params_init(&p);
  e = posenc_embedding_bsd(pe, POSENC_F32, 1, N, D);
  CHECK(posenc_sinusoidal_write(&p, &e) == POSENC_OK);
  /* docs/math.md §6: p = 1 -> [0.8415, 0.5403, 0.0100, 0.99995] */
  CHECK(fabsf(pe[4] - 0.841471f) < 1e-6f && fabsf(pe[5] - 0.540302f) < 1e-6f);
  for (i = 0; i < N * D; ++i) x[i] = 1.0f;
  ex = posenc_embedding_bsd(x, POSENC_F32, 1, N, D);
  CHECK(posenc_sinusoidal_add(&p, &ex, NULL) == POSENC_OK);
  CHECK(x[4] == (float)(1.0 + (double)pe[4]));
  CHECK(posenc_sinusoidal_table_create(&p, D, 16, &table) == POSENC_OK);
  CHECK(memcmp(posenc_sinusoidal_table_row(table, 0), pe, sizeof(pe)) == 0);
  CHECK(posenc_sinusoidal_table_row(table, 16) == NULL);
  posenc_sinusoidal_table_destroy(table);
  e.d_model = 5;
  CHECK_ERROR(posenc_sinusoidal_write(&p, &e), POSENC_INVALID_ARGUMENT, "out.d_model = 5");
  CHECK_ERROR(posenc_sinusoidal_write(&p, NULL), POSENC_INVALID_ARGUMENT, "out is null");
  CHECK_ERROR(posenc_sinusoidal_add(&p, NULL, NULL), POSENC_INVALID_ARGUMENT, "x is null");
  CHECK_ERROR(posenc_sinusoidal_add(NULL, &ex, NULL), POSENC_INVALID_ARGUMENT, "params is null");
  p.base = 0.0;
  CHECK_ERROR(posenc_sinusoidal_add(&p, &ex, NULL), POSENC_INVALID_ARGUMENT, "base = 0");
  CHECK_ERROR(posenc_sinusoidal_table_create(&p, 4, 16, NULL), POSENC_INVALID_ARGUMENT, "out is null");
}

/* Llama 4 vision RoPE: interleaved pairs, pair i < d/4 by (col + 1) w_i, pair d/4 + i by
 * (row + 1) w_i, w_i = theta^(-4i/d); the CLS token (-1, -1) is left as it is. */
static void test_vision_llama4(void) {
  enum { P = 3, D = 8 };
  const int64_t rc[P * 2] = {0, 0, 0, 1, -1, -1};
  int64_t bad[P * 2] = {0, 0, 0, 1, -1, 0};
  float q[P * D], out[P * D];
  posenc_tensor tq, tout;
  posenc_vision_params vp;
  int p, i, ok = 1;
  for (i = 0; i < P * D; ++i) q[i] = (float)((i * 7) % 11 - 5) * 0.5f;
  for (i = 0; i < P * D; ++i) out[i] = -3.0f;
  tq = posenc_tensor_bshd(q, POSENC_F32, 1, P, 1, D);
  tout = posenc_tensor_bshd(out, POSENC_F32, 1, P, 1, D);
  posenc_vision_params_init(&vp);
  vp.kind = POSENC_VISION_LLAMA4;
  vp.rows_cols64 = bad;
  CHECK_ERROR(posenc_vision_rope_apply(&tq, &tout, NULL, NULL, &vp), POSENC_INVALID_ARGUMENT,
              "rows_cols64[0, 2] = (-1, 0)");
  CHECK(all_equal(out, P * D, -3.0f));
  vp.rows_cols64 = rc;
  CHECK(posenc_vision_rope_apply(&tq, &tout, NULL, NULL, &vp) == POSENC_OK);
  for (p = 0; p < P; ++p) {
    for (i = 0; i < D / 2; ++i) {
      const double w = pow(10000.0, -4.0 * (i % (D / 4)) / D);
      const double pos = i < D / 4 ? (double)(rc[2 * p + 1] + 1) : (double)(rc[2 * p] + 1);
      const double x = q[p * D + 2 * i], y = q[p * D + 2 * i + 1], a = pos * w;
      const double ex = x * cos(a) - y * sin(a), ey = x * sin(a) + y * cos(a);
      if (fabs(out[p * D + 2 * i] - ex) > 1e-6 || fabs(out[p * D + 2 * i + 1] - ey) > 1e-6) ok = 0;
    }
  }
  CHECK(ok);
  CHECK(memcmp(out + 2 * D, q + 2 * D, D * sizeof(float)) == 0); /* CLS: angle 0 */
}

/* Grid positions and Qwen2.5-VL's window order. Grid (1, 4, 6), merge 2, window 56 / 2 / 14 = 2
 * units: HF's get_window_index gives windows {0, 1, 3, 4} and {2, 5} of the 2 x 3 units, that
 * is cu_window_seqlens [0, 16, 24]. */
static void test_vision_orders(void) {
  int64_t rc[2 * 24], idx[6], cu[3], n = -1, nw = -1, i;
  const int64_t want_idx[6] = {0, 1, 3, 4, 2, 5};
  const int64_t unit3[8] = {2, 0, 2, 1, 3, 0, 3, 1}; /* (row, col) of unit 3, window-order slot 2 */
  CHECK(posenc_vision_grid_positions(POSENC_VISION_LLAMA4, 1, 3, 4, 1, NULL, 0, &n) == POSENC_OK);
  CHECK(n == 13);
  CHECK_ERROR(posenc_vision_grid_positions(POSENC_VISION_LLAMA4, 1, 3, 4, 1, rc, 12, &n),
              POSENC_INVALID_ARGUMENT, "capacity_pairs = 12: needs 13 pairs");
  CHECK(posenc_vision_grid_positions(POSENC_VISION_LLAMA4, 1, 3, 4, 1, rc, 24, &n) == POSENC_OK);
  CHECK(rc[0] == 0 && rc[1] == 0 && rc[2] == 0 && rc[3] == 1 && rc[22] == 2 && rc[23] == 3);
  CHECK(rc[24] == -1 && rc[25] == -1); /* the CLS token */
  CHECK_ERROR(posenc_vision_grid_positions((posenc_vision_kind)7, 1, 3, 4, 1, rc, 24, &n),
              POSENC_INVALID_ARGUMENT, "kind = 7");
  CHECK(posenc_vision_window_order(1, 4, 6, 2, 56, 14, NULL, NULL, NULL, 0, &nw) == POSENC_OK);
  CHECK(nw == 2);
  cu[2] = -5;
  CHECK_ERROR(posenc_vision_window_order(1, 4, 6, 2, 56, 14, rc, idx, cu, 2, &nw),
              POSENC_INVALID_ARGUMENT, "cu_capacity = 2: needs num_windows + 1 = 3");
  CHECK(cu[2] == -5);
  CHECK(posenc_vision_window_order(1, 4, 6, 2, 56, 14, rc, idx, cu, 3, &nw) == POSENC_OK);
  CHECK(memcmp(idx, want_idx, sizeof(want_idx)) == 0);
  CHECK(cu[0] == 0 && cu[1] == 16 && cu[2] == 24);
  for (i = 0; i < 8; ++i) CHECK(rc[16 + i] == unit3[i]);
  CHECK_ERROR(posenc_vision_window_order(1, 4, 6, 2, 20, 14, rc, idx, cu, 3, &nw),
              POSENC_INVALID_ARGUMENT, "window_size = 20");
  CHECK_ERROR(posenc_vision_window_order(1, 4, 6, 2, 56, 14, rc, idx, cu, 3, NULL),
              POSENC_INVALID_ARGUMENT, "num_windows is null");
}

static void test_conversions_and_targets(void) {
  float f[3] = {1.0f, 65520.0f, -0.0f}, back[3];
  uint16_t h[3];
  char buf[128];
  size_t need;
  CHECK(posenc_convert_from_f32(f, 3, POSENC_F16, h) == POSENC_OK);
  CHECK(h[0] == 0x3C00 && h[1] == 0x7C00 && h[2] == 0x8000);
  CHECK(posenc_convert_to_f32(h, POSENC_F16, 3, back) == POSENC_OK);
  CHECK(back[0] == 1.0f && isinf(back[1]));
  CHECK(posenc_convert_from_f32(f, 1, POSENC_BF16, h) == POSENC_OK && h[0] == 0x3F80);
  CHECK_ERROR(posenc_convert_to_f32(NULL, POSENC_F16, 3, back), POSENC_INVALID_ARGUMENT, "src is null");
  CHECK_ERROR(posenc_convert_from_f32(f, 3, (posenc_dtype)9, h), POSENC_INVALID_ARGUMENT, "dtype = 9");

  /* The linked library's version is posenc/version.h's, which is MAJOR.MINOR.PATCH. */
  snprintf(buf, sizeof(buf), "%d.%d.%d", POSENC_VERSION_MAJOR, POSENC_VERSION_MINOR,
           POSENC_VERSION_PATCH);
  CHECK(strcmp(buf, POSENC_VERSION_STRING) == 0);
  CHECK(strcmp(posenc_version(), POSENC_VERSION_STRING) == 0);
  need = posenc_compiled_targets(buf, sizeof(buf));
  CHECK(need > 0 && strlen(buf) == need);
  CHECK(posenc_supported_targets(buf, 4) == posenc_supported_targets(NULL, 0));
  CHECK(strlen(buf) == 3); /* truncated, NUL-terminated */
  /* "SCALAR" caps at the least capable compiled target: the last supported one. */
  posenc_supported_targets(buf, sizeof(buf));
  CHECK(posenc_set_max_target("SCALAR") == POSENC_OK);
  CHECK(strcmp(posenc_chosen_target(), strrchr(buf, ' ') != NULL ? strrchr(buf, ' ') + 1 : buf) == 0);
  CHECK(posenc_set_max_target(NULL) == POSENC_OK);
  CHECK_ERROR(posenc_set_max_target("AVX9"), POSENC_INVALID_ARGUMENT, "\"AVX9\": unknown target");
  CHECK(strlen(posenc_chosen_target()) > 0);
}

/* The vision tower's RoPE from a config (posenc_vision_config_parse / _load); errors leave *out. */
static void test_vision_config(void) {
  posenc_vision_config c;
  memset(&c, 0, sizeof(c));
  CHECK(posenc_vision_config_parse("{\"model_type\": \"qwen2_5_vl\", \"vision_config\": "
                                   "{\"hidden_size\": 1280, \"num_heads\": 16}}",
                                   &c) == POSENC_OK);
  CHECK(c.kind == POSENC_VISION_QWEN_VL && c.head_dim == 80 && c.num_heads == 16);
  CHECK(c.window_size == 112 && c.spatial_merge_size == 2 && c.patch_size == 14 && c.theta == 10000.0);
  CHECK(posenc_vision_config_parse("{\"model_type\": \"llama4\", \"vision_config\": "
                                   "{\"hidden_size\": 1408, \"rope_theta\": 500}}",
                                   &c) == POSENC_OK);
  CHECK(c.kind == POSENC_VISION_LLAMA4 && c.head_dim == 88 && c.theta == 500.0 && c.image_size == 448);
  c.head_dim = -3;
  CHECK_ERROR(posenc_vision_config_parse("{\"model_type\": \"gemma\"}", &c), POSENC_INVALID_ARGUMENT,
              "model_type = \"gemma\"");
  CHECK(c.head_dim == -3);
  CHECK_ERROR(posenc_vision_config_parse(NULL, &c), POSENC_INVALID_ARGUMENT, "json_text is null");
  CHECK_ERROR(posenc_vision_config_parse("{}", NULL), POSENC_INVALID_ARGUMENT, "out is null");
  CHECK_ERROR(posenc_vision_config_load("/no/such/config.json", &c), POSENC_INVALID_ARGUMENT,
              "cannot open");
  CHECK(c.head_dim == -3);
}

int main(void) {
  test_rope();
  test_rope_call();
  test_tables_and_caches();
  test_configs();
  test_models();
  test_sinusoidal();
  test_vision_llama4();
  test_vision_orders();
  test_vision_config();
  test_conversions_and_targets();
  printf("c_api_test: %d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
