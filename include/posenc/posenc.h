/* posenc/posenc.h: the stable C API of posenc (C99; no C++ types).
 *
 * Everything the C++ API offers: RoPE on q/k tensor views (any strides, f32/bf16/f16, GQA, in or
 * out of place, half or interleaved pairs, partial rotary, inverse, attention factor, positions
 * as offsets or ids), cos/sin on the fly, from a table object or from caller caches, frequencies
 * from a model config.json; ReRoPE attention scores; sinusoidal tables and fused adds; bf16/f16
 * conversions; SIMD target info and capping; version.
 *
 * Errors: every function returning posenc_status validates all arguments first and writes
 * nothing when it fails. posenc_last_error() then returns a message naming the argument and its
 * value, e.g. "rotary_dim = 7: must be even, > 0 (or 0 for head_dim) and <= head_dim = 128". The
 * message is per thread (thread-local storage) and stays valid until the next failing posenc
 * call on that thread. No function aborts, and no C++ exception crosses this boundary.
 *
 * Threads: every function is reentrant. Table and config objects are immutable after creation
 * and may be shared between threads without locking; destroy them once no call uses them.
 * posenc_set_max_target changes process-wide state: call it before starting work on threads.
 */
#ifndef POSENC_POSENC_H_
#define POSENC_POSENC_H_

#include <stddef.h>
#include <stdint.h>

#include "posenc/export.h"
#include "posenc/version.h" /* POSENC_VERSION_MAJOR / _MINOR / _PATCH / _STRING */

#ifdef __cplusplus
extern "C" {
#endif

typedef enum posenc_status {
  POSENC_OK = 0,
  POSENC_INVALID_ARGUMENT = 1,
  POSENC_OUT_OF_RANGE = 2,
  POSENC_UNSUPPORTED = 3,
  POSENC_INTERNAL = 4
} posenc_status;

typedef enum posenc_dtype { POSENC_F32 = 0, POSENC_BF16 = 1, POSENC_F16 = 2 } posenc_dtype;
/* POSENC_PAIRS_FROM_CONFIG (set by posenc_rope_params_init): with params.config or a model, the
 * config's layout; without, half. HALF and INTERLEAVED override a config's layout. */
typedef enum posenc_pairs {
  POSENC_PAIRS_HALF = 0,
  POSENC_PAIRS_INTERLEAVED = 1,
  POSENC_PAIRS_FROM_CONFIG = 2
} posenc_pairs;
/* posenc::RotationArithmetic (posenc/rope.h): FMA_CHAIN is kF64's bound with f32 lanes and hi / lo
 * rows; a table must have been created for it (posenc_rope_table_create_for). */
typedef enum posenc_arithmetic {
  POSENC_ARITH_F64 = 0,
  POSENC_ARITH_F32 = 1,
  POSENC_ARITH_FMA_CHAIN = 2
} posenc_arithmetic;

/* A [batch, seq, heads, head_dim] view; strides in elements; strides[3] must be 1. A tensor whose
 * data is NULL is absent. */
typedef struct posenc_tensor {
  void* data;
  posenc_dtype dtype;
  int64_t shape[4];
  int64_t strides[4];
} posenc_tensor;

/* Contiguous [batch, seq, heads, head_dim] and [batch, heads, seq, head_dim] memory. */
POSENC_API posenc_tensor posenc_tensor_bshd(void* data, posenc_dtype dtype, int64_t batch,
                                            int64_t seq, int64_t heads, int64_t head_dim);
POSENC_API posenc_tensor posenc_tensor_bhsd(void* data, posenc_dtype dtype, int64_t batch,
                                            int64_t heads, int64_t seq, int64_t head_dim);

typedef enum posenc_positions_kind {
  POSENC_POSITIONS_OFFSET = 0,     /* p = offset + s */
  POSENC_POSITIONS_PER_BATCH = 1,  /* p = batch_offsets[b] + s */
  POSENC_POSITIONS_IDS32 = 2,      /* p = ids32[b * seq + s] */
  POSENC_POSITIONS_IDS64 = 3,      /* p = ids64[b * seq + s] */
  /* M-RoPE (posenc_rope_apply with mrope_section only): `streams` position streams,
   * ids [streams, batch, seq]; stream j of token (b, s) is ids[(j * batch + b) * seq + s]. */
  POSENC_POSITIONS_STREAM_IDS32 = 4, /* ids32 */
  POSENC_POSITIONS_STREAM_IDS64 = 5  /* ids64 */
} posenc_positions_kind;

typedef struct posenc_positions {
  posenc_positions_kind kind;
  int64_t offset;
  const int64_t* batch_offsets;
  const int32_t* ids32;
  const int64_t* ids64;
  int64_t streams;  /* STREAM_IDS32 / STREAM_IDS64: number of streams (= mrope_section_len) */
} posenc_positions;

typedef struct posenc_rope_table posenc_rope_table;  /* opaque, immutable */
typedef struct posenc_rope_call posenc_rope_call;    /* opaque: a prepared RoPE call */
typedef struct posenc_config posenc_config;          /* opaque, immutable */

typedef enum posenc_source {
  POSENC_SOURCE_ON_THE_FLY = 0,
  POSENC_SOURCE_TABLE = 1,             /* params.table */
  POSENC_SOURCE_CACHE_BY_POSITION = 2, /* cos/sin [cache_rows, rotary_dim / 2], row = position */
  POSENC_SOURCE_CACHE_PER_TOKEN = 3    /* cos/sin [batch, seq, rotary_dim / 2] */
} posenc_source;

typedef struct posenc_rope_params {
  posenc_pairs pairs;
  posenc_arithmetic arithmetic;
  int64_t rotary_dim;       /* 0: head_dim (or the config's) */
  int inverse;              /* nonzero: rotate by -theta */
  double base;              /* rope_theta, when inv_freq is NULL */
  const double* inv_freq;   /* rotary_dim / 2 values, or NULL */
  int64_t inv_freq_len;
  double attention_factor;
  const posenc_config* config;  /* if set: frequencies, factor and rotary_dim from the config */
  posenc_positions positions;
  posenc_source source;
  const posenc_rope_table* table;
  const void* cache_cos;
  const void* cache_sin;
  posenc_dtype cache_dtype;
  int64_t cache_rows;
  int max_threads;          /* 0: all (TBB's current arena); 1: serial */
  int64_t seq_len;          /* with a config: L for dynamic / longrope (0: largest position + 1) */
  /* M-RoPE (posenc::MRopeSections in posenc/rope.h): pairs per position stream, summing to
   * rotary_dim / 2; mrope_section_len 0: plain RoPE, or with a config the config's sections.
   * mrope_interleaved nonzero: Qwen3-VL's interleaved layout. */
  const int64_t* mrope_section;
  int64_t mrope_section_len;
  int mrope_interleaved;
} posenc_rope_params;

/* Defaults: pairs from the config (half without one), f64 arithmetic, base 10000, factor 1,
 * offset 0, on the fly, seq_len 0. */
POSENC_API void posenc_rope_params_init(posenc_rope_params* params);

/* RoPE on q and/or k (either may be NULL or absent); q_out / k_out NULL or absent: in place. */
POSENC_API posenc_status posenc_rope_apply(const posenc_tensor* q, const posenc_tensor* q_out,
                                           const posenc_tensor* k, const posenc_tensor* k_out,
                                           const posenc_rope_params* params);
/* A RoPE call prepared once and applied at new positions many times (posenc::RopeCall in
 * posenc/rope.h): create validates the tensors and params as posenc_rope_apply does (positions
 * included) and keeps them; apply then checks only the positions it is given, so a decode step
 * skips the per-call checks. posenc_rope_call_apply(call, &positions) writes exactly the bits of
 * posenc_rope_apply with params->positions = positions. The tensors' buffers, a table and caller
 * caches must outlive the call; inv_freq and mrope_section are copied. params->config must be
 * NULL (a config's frequencies may depend on the positions: no prepared form). Two applies of
 * one call at the same time race on its outputs. On failure *out is unchanged. */
POSENC_API posenc_status posenc_rope_call_create(const posenc_tensor* q, const posenc_tensor* q_out,
                                                 const posenc_tensor* k, const posenc_tensor* k_out,
                                                 const posenc_rope_params* params,
                                                 posenc_rope_call** out);
POSENC_API posenc_status posenc_rope_call_apply(const posenc_rope_call* call,
                                                const posenc_positions* positions);
POSENC_API void posenc_rope_call_destroy(posenc_rope_call* call);
/* The same in scalar double precision (the oracle). */
POSENC_API posenc_status posenc_rope_apply_reference(const posenc_tensor* q,
                                                     const posenc_tensor* q_out,
                                                     const posenc_tensor* k,
                                                     const posenc_tensor* k_out,
                                                     const posenc_rope_params* params);

/* KV-cache position shift (posenc/shift.h): re-rotates already-rotated keys by deltas, one RoPE
 * rotation with the deltas as positions (same frequencies and layout the cache was rotated with;
 * after n shifts the error is at most n times one rotation's bound, see posenc/shift.h). */
typedef enum posenc_shift_kind {
  POSENC_SHIFT_UNIFORM = 0,    /* every token by `delta` */
  POSENC_SHIFT_PER_BATCH = 1,  /* deltas[b] */
  POSENC_SHIFT_PER_TOKEN = 2   /* deltas[b * seq + s] */
} posenc_shift_kind;
typedef struct posenc_shift_params {
  posenc_shift_kind kind;
  int64_t delta;
  const int64_t* deltas;
  posenc_pairs pairs;       /* FROM_CONFIG means HALF */
  posenc_arithmetic arithmetic;
  int64_t rotary_dim;       /* 0: head_dim */
  double base;              /* when inv_freq is NULL */
  const double* inv_freq;
  int64_t inv_freq_len;
  int max_threads;
} posenc_shift_params;
/* Defaults: uniform delta 0, half pairs, f64 arithmetic, base 10000. */
POSENC_API void posenc_shift_params_init(posenc_shift_params* params);
/* k_out NULL or absent: in place. */
POSENC_API posenc_status posenc_rope_shift(const posenc_tensor* k, const posenc_tensor* k_out,
                                           const posenc_shift_params* params);

/* Fused undo-at-p / redo-at-p' when the frequencies change (posenc::RerotateRope in
 * posenc/shift.h; e.g. a longrope short -> long switch): keys rotated at from.positions with the
 * from frequencies become the keys rotated at to.positions with the to frequencies, in one pass.
 * Each side names its frequencies (base, or inv_freq), attention factor, positions and cos/sin
 * source (on the fly, a posenc_rope_table, or a caller cache, as in posenc_rope_params). Both on
 * the fly: within ApplyRope's bound; a table or cache on either side: the rows composed, within
 * 4 ulp more (posenc/shift.h). */
typedef struct posenc_rerotate_side {
  double base;              /* when inv_freq is NULL */
  const double* inv_freq;   /* rotary_dim / 2 values, or NULL */
  int64_t inv_freq_len;
  double attention_factor;  /* from: the factor the keys carry (a from cache's rows hold it) */
  posenc_positions positions;
  posenc_source source;
  const posenc_rope_table* table;
  const void* cache_cos;
  const void* cache_sin;
  posenc_dtype cache_dtype;
  int64_t cache_rows;
} posenc_rerotate_side;
typedef struct posenc_rerotate_params {
  posenc_pairs pairs;       /* FROM_CONFIG means HALF */
  posenc_arithmetic arithmetic;
  int64_t rotary_dim;       /* 0: head_dim */
  posenc_rerotate_side from, to;
  int max_threads;
} posenc_rerotate_params;
/* Defaults: half pairs, f64 arithmetic; each side base 10000, factor 1, offset 0, on the fly. */
POSENC_API void posenc_rerotate_params_init(posenc_rerotate_params* params);
/* k_out NULL or absent: in place. */
POSENC_API posenc_status posenc_rope_rerotate(const posenc_tensor* k, const posenc_tensor* k_out,
                                              const posenc_rerotate_params* params);
/* The same in scalar double precision (the oracle). */
POSENC_API posenc_status posenc_rope_rerotate_reference(const posenc_tensor* k,
                                                        const posenc_tensor* k_out,
                                                        const posenc_rerotate_params* params);

/* 2-D vision RoPE (posenc/vision.h): Qwen2-VL / Qwen2.5-VL / Qwen3-VL vision towers, Pixtral
 * and Llama 4; (row, col) per patch [batch, patches, 2] in rows_cols64 or rows_cols32 (one set).
 * LLAMA4: interleaved pairs, angles (col + 1) and (row + 1); the CLS token is (-1, -1). */
typedef enum posenc_vision_kind {
  POSENC_VISION_QWEN_VL = 0,
  POSENC_VISION_PIXTRAL = 1,
  POSENC_VISION_LLAMA4 = 2
} posenc_vision_kind;
typedef struct posenc_vision_params {
  posenc_vision_kind kind;
  double theta;
  const int64_t* rows_cols64;
  const int32_t* rows_cols32;
  posenc_arithmetic arithmetic;
  int inverse;
  int max_threads;
} posenc_vision_params;
/* Defaults: QWEN_VL, theta 10000, f64 arithmetic. */
POSENC_API void posenc_vision_params_init(posenc_vision_params* params);
POSENC_API posenc_status posenc_vision_rope_apply(const posenc_tensor* q, const posenc_tensor* q_out,
                                                  const posenc_tensor* k, const posenc_tensor* k_out,
                                                  const posenc_vision_params* params);
/* (row, col) per patch in HF's order (posenc::VisionGridPositions; LLAMA4: h * w patches and the
 * CLS token last). *num_patches receives the count; rows_cols (capacity_pairs pairs) may be NULL
 * to only count. A capacity below the count fails and writes nothing. */
POSENC_API posenc_status posenc_vision_grid_positions(posenc_vision_kind kind, int64_t t, int64_t h,
                                                      int64_t w, int64_t spatial_merge_size,
                                                      int64_t* rows_cols, int64_t capacity_pairs,
                                                      int64_t* num_patches);
/* Qwen2.5-VL's window order (posenc::VisionWindowedGridPositions): rows_cols [t*h*w, 2] and
 * window_index [t*h*w / merge^2] (sizes fixed by the grid; either may be NULL), and
 * cu_window_seqlens [*num_windows + 1] (cu_capacity values; NULL to only count). num_windows
 * must be set; a cu_capacity below *num_windows + 1 fails and writes nothing. */
POSENC_API posenc_status posenc_vision_window_order(int64_t t, int64_t h, int64_t w,
                                                    int64_t spatial_merge_size, int64_t window_size,
                                                    int64_t patch_size, int64_t* rows_cols,
                                                    int64_t* window_index,
                                                    int64_t* cu_window_seqlens,
                                                    int64_t cu_capacity, int64_t* num_windows);

/* The vision tower's RoPE of a multimodal model's config.json (posenc::LoadHfVisionConfig):
 * Qwen2-VL, Qwen2.5-VL, Qwen3-VL, Pixtral / Mistral 3 / LLaVA-Pixtral, Llama 4. On failure *out
 * is unchanged. */
typedef struct posenc_vision_config {
  posenc_vision_kind kind;
  double theta;
  int64_t head_dim;
  int64_t num_heads;
  int64_t patch_size;
  int64_t spatial_merge_size; /* 1: none */
  int64_t window_size;        /* Qwen2.5-VL window attention in pixels; 0: none */
  int64_t image_size;         /* Pixtral: largest side; Llama 4: the side; 0: not given */
} posenc_vision_config;
POSENC_API posenc_status posenc_vision_config_load(const char* path, posenc_vision_config* out);
POSENC_API posenc_status posenc_vision_config_parse(const char* json_text,
                                                    posenc_vision_config* out);

/* f32 cos/sin rows for positions [0, max_positions). inv_freq NULL: from base. */
POSENC_API posenc_status posenc_rope_table_create(int64_t rotary_dim, double base,
                                                  const double* inv_freq, int64_t inv_freq_len,
                                                  double attention_factor, int64_t max_positions,
                                                  posenc_rope_table** out);
/* The same for calls with `arithmetic`: POSENC_ARITH_FMA_CHAIN also stores the rows' lo parts
 * (twice the memory; RopeTable::Create with an arithmetic). */
POSENC_API posenc_status posenc_rope_table_create_for(int64_t rotary_dim, double base,
                                                      const double* inv_freq,
                                                      int64_t inv_freq_len,
                                                      double attention_factor,
                                                      int64_t max_positions,
                                                      posenc_arithmetic arithmetic,
                                                      posenc_rope_table** out);
POSENC_API void posenc_rope_table_destroy(posenc_rope_table* table);

/* Model configs: a Hugging Face config.json file or text, or filled by hand. */
typedef enum posenc_rope_type {
  POSENC_ROPE_DEFAULT = 0,
  POSENC_ROPE_LINEAR = 1,
  POSENC_ROPE_DYNAMIC = 2,
  POSENC_ROPE_NTK = 3,
  POSENC_ROPE_YARN = 4,
  POSENC_ROPE_LLAMA3 = 5,
  POSENC_ROPE_LONGROPE = 6,
  POSENC_ROPE_PROPORTIONAL = 7
} posenc_rope_type;

typedef struct posenc_config_desc {
  posenc_rope_type rope_type;
  double rope_theta;
  int64_t head_dim;
  double partial_rotary_factor;
  int64_t max_position_embeddings;           /* 0: absent */
  int64_t original_max_position_embeddings;  /* 0: absent */
  int has_factor;
  double factor;
  double alpha;                              /* ntk */
  double beta_fast, beta_slow;               /* yarn */
  int has_mscale, has_mscale_all_dim, has_attention_factor;
  double mscale, mscale_all_dim, attention_factor;
  int truncate;                              /* yarn, default 1 */
  double low_freq_factor, high_freq_factor;  /* llama3 */
  const double* short_factor;                /* longrope, rotary_dim / 2 each */
  const double* long_factor;
  int64_t factor_len;
  posenc_pairs pairs;                        /* HALF or INTERLEAVED (the model's layout) */
  int64_t rotary_dim;                        /* 0: int(head_dim * partial_rotary_factor) */
  const int64_t* mrope_section;              /* M-RoPE pairs per stream (t, h, w), or NULL */
  int64_t mrope_section_len;
  int mrope_interleaved;                     /* Qwen3-VL */
} posenc_config_desc;

POSENC_API void posenc_config_desc_init(posenc_config_desc* desc);  /* HF defaults */
/* The description of a config (the inverse of posenc_config_create). Pointers (short_factor,
 * long_factor, mrope_section) point into the config and live as long as it. */
POSENC_API posenc_status posenc_config_describe(const posenc_config* config, posenc_config_desc* out);
POSENC_API posenc_status posenc_config_create(const posenc_config_desc* desc, posenc_config** out);
POSENC_API posenc_status posenc_config_load(const char* path, posenc_config** out);
POSENC_API posenc_status posenc_config_parse(const char* json_text, posenc_config** out);
POSENC_API void posenc_config_destroy(posenc_config* config);
/* Frequencies for sequence length seq_len (0: unknown). inv_freq receives rotary_dim / 2 values
 * (capacity: its length); any output pointer may be NULL. */
POSENC_API posenc_status posenc_config_frequencies(const posenc_config* config, int64_t seq_len,
                                                   double* inv_freq, int64_t capacity,
                                                   int64_t* rotary_dim, double* attention_factor);
/* HF's stateful dynamic NTK rule (posenc::HfDynamicLength): the length whose frequencies HF uses
 * for a call of length seq_len after a call left cached_len (0 at the start); pass it as
 * params.seq_len. Returns seq_len for other rope types, and -1 when config is NULL. */
POSENC_API int64_t posenc_config_hf_dynamic_length(const posenc_config* config, int64_t cached_len,
                                                   int64_t seq_len);

/* Models (posenc/model.h): a config.json with per-layer RoPE. Layer types are named as the model
 * names them ("sliding_attention", "full_attention", ...). */
typedef struct posenc_model posenc_model;  /* opaque, immutable */
POSENC_API posenc_status posenc_model_load(const char* path, posenc_model** out);
POSENC_API posenc_status posenc_model_parse(const char* json_text, posenc_model** out);
POSENC_API void posenc_model_destroy(posenc_model* model);
/* Decoder layers (0 when the config gives no count), distinct RoPE layer types. */
POSENC_API int64_t posenc_model_num_layers(const posenc_model* model);
POSENC_API int64_t posenc_model_num_layer_types(const posenc_model* model);
/* Name of RoPE layer type `index` (static while the model lives), or NULL out of range. */
POSENC_API const char* posenc_model_layer_type_name(const posenc_model* model, int64_t index);
/* The RoPE layer type index of decoder layer `layer` into *type_index, or -1 for a layer
 * without RoPE. */
POSENC_API posenc_status posenc_model_layer_type(const posenc_model* model, int64_t layer,
                                                 int64_t* type_index);
/* The config of a layer type, borrowed: valid while the model lives (never destroy it). */
POSENC_API posenc_status posenc_model_config(const posenc_model* model, const char* layer_type,
                                             const posenc_config** out);
/* Factor on the attention softmax scale outside RoPE (DeepSeek mscale^2), 1 for most models;
 * 0 when model is NULL. */
POSENC_API double posenc_model_softmax_scale_factor(const posenc_model* model);
/* posenc_config_frequencies for a layer type. */
POSENC_API posenc_status posenc_model_frequencies(const posenc_model* model, const char* layer_type,
                                                  int64_t seq_len, double* inv_freq,
                                                  int64_t capacity, int64_t* rotary_dim,
                                                  double* attention_factor);
/* posenc_rope_apply with the RoPE of a layer type / of decoder layer `layer` (params.config must
 * be NULL). A layer without RoPE is an error. */
POSENC_API posenc_status posenc_model_rope_apply(const posenc_tensor* q, const posenc_tensor* q_out,
                                                 const posenc_tensor* k, const posenc_tensor* k_out,
                                                 const posenc_model* model, const char* layer_type,
                                                 const posenc_rope_params* params);
POSENC_API posenc_status posenc_model_rope_apply_layer(const posenc_tensor* q,
                                                       const posenc_tensor* q_out,
                                                       const posenc_tensor* k,
                                                       const posenc_tensor* k_out,
                                                       const posenc_model* model, int64_t layer,
                                                       const posenc_rope_params* params);

/* Sinusoidal encodings (see posenc/sinusoidal.h for the conventions). */
typedef enum posenc_sinusoidal_layout {
  POSENC_SINUSOIDAL_INTERLEAVED = 0,
  POSENC_SINUSOIDAL_CONCAT_SIN_COS = 1,
  POSENC_SINUSOIDAL_CONCAT_COS_SIN = 2
} posenc_sinusoidal_layout;
typedef enum posenc_frequency_spacing {
  POSENC_SPACING_PAPER = 0,
  POSENC_SPACING_T2T = 1
} posenc_frequency_spacing;

typedef struct posenc_sinusoidal_table posenc_sinusoidal_table;  /* opaque, immutable */

/* A [batch, seq, d_model] view, d_model contiguous, strides in elements. */
typedef struct posenc_embedding {
  void* data;
  posenc_dtype dtype;
  int64_t batch, seq, d_model;
  int64_t stride_batch, stride_seq;
} posenc_embedding;
POSENC_API posenc_embedding posenc_embedding_bsd(void* data, posenc_dtype dtype, int64_t batch,
                                                 int64_t seq, int64_t d_model);

typedef struct posenc_sinusoidal_params {
  posenc_sinusoidal_layout layout;
  posenc_frequency_spacing spacing;
  double base;
  int64_t position_offset;
  double x_scale;
  posenc_positions positions;
  const posenc_sinusoidal_table* table;  /* PE rows; layout, spacing, base, position_offset
                                            must equal the table's */
  int max_threads;
} posenc_sinusoidal_params;

POSENC_API void posenc_sinusoidal_params_init(posenc_sinusoidal_params* params);
POSENC_API posenc_status posenc_sinusoidal_write(const posenc_sinusoidal_params* params,
                                                 const posenc_embedding* out);
/* out NULL: in place. */
POSENC_API posenc_status posenc_sinusoidal_add(const posenc_sinusoidal_params* params,
                                               const posenc_embedding* x,
                                               const posenc_embedding* out);
POSENC_API posenc_status posenc_sinusoidal_table_create(const posenc_sinusoidal_params* params,
                                                        int64_t d_model, int64_t max_positions,
                                                        posenc_sinusoidal_table** out);
POSENC_API void posenc_sinusoidal_table_destroy(posenc_sinusoidal_table* table);
/* Row p (d_model floats), or NULL when p is outside the table. */
POSENC_API const float* posenc_sinusoidal_table_row(const posenc_sinusoidal_table* table,
                                                    int64_t p);

/* ReRoPE: attention scores with relative RoPE positions, exact or mapped beyond a window (see
 * posenc/rerope.h and docs/rerope.md). For q [batch, q_len, heads, head_dim] and an UNROTATED k
 * [batch, k_len, kv_heads, head_dim] (q's dtype; heads a multiple of kv_heads), writes the f32
 * scores [batch, heads, q_len, k_len] = scale * q_i . R(-f(p_i - p_j)) k_j (the rotary part times
 * attention_factor^2), -inf where causal and p_j > p_i. Modes: f(a) = a (exact), min(a, w) (cap:
 * ReRoPE), a <= w ? a : w + (a - w) / leak (leaky), a <= w ? a : w (1 + ln(a / w)) (log); negative
 * distances mirror. Within 0.5 ulp + (r/16 + (head_dim - r)/8 + 16) 2^-53 M of the exact value. */
typedef enum posenc_distance_mode {
  POSENC_DISTANCE_EXACT = 0,
  POSENC_DISTANCE_CAP = 1,
  POSENC_DISTANCE_LEAKY = 2,
  POSENC_DISTANCE_LOG = 3
} posenc_distance_mode;

typedef struct posenc_rerope_table posenc_rerope_table; /* opaque, immutable */

typedef struct posenc_rerope_params {
  posenc_distance_mode mode;
  int64_t window;           /* w > 0 for cap, leaky and log */
  double leak;              /* leaky: > 1 */
  posenc_pairs pairs;
  int64_t rotary_dim;       /* 0: head_dim (or the config's) */
  double base;              /* rope_theta, when inv_freq is NULL */
  const double* inv_freq;   /* rotary_dim / 2 values, or NULL */
  int64_t inv_freq_len;
  double attention_factor;
  const posenc_config* config;  /* if set: frequencies, factor and rotary_dim from the config */
  posenc_positions q_positions; /* of the queries, [batch, q_len] ids */
  posenc_positions k_positions; /* of the keys, [batch, k_len] ids */
  double scale;             /* softmax scale, multiplies every score */
  int causal;               /* nonzero: p_j > p_i gives -inf */
  const posenc_rerope_table* table; /* cos/sin by distance (its frequencies, factor and map) */
  int max_threads;          /* 0: all (TBB's current arena); 1: serial */
} posenc_rerope_params;

/* Defaults: exact, half pairs, base 10000, factor 1, scale 1, positions from 0, not causal. */
POSENC_API void posenc_rerope_params_init(posenc_rerope_params* params);
POSENC_API posenc_status posenc_rerope_scores(const posenc_tensor* q, const posenc_tensor* k,
                                              const posenc_tensor* scores,
                                              const posenc_rerope_params* params);
/* The same in scalar double precision (the oracle); params.config must be NULL. */
POSENC_API posenc_status posenc_rerope_scores_reference(const posenc_tensor* q,
                                                        const posenc_tensor* k,
                                                        const posenc_tensor* scores,
                                                        const posenc_rerope_params* params);
/* Rows for distances [0, max_distance) with params' frequencies, attention factor and map
 * (mode, window, leak; params.config must be NULL). */
POSENC_API posenc_status posenc_rerope_table_create(const posenc_rerope_params* params,
                                                    int64_t rotary_dim, int64_t max_distance,
                                                    posenc_rerope_table** out);
POSENC_API void posenc_rerope_table_destroy(posenc_rerope_table* table);

/* bf16 / f16 <-> f32, round to nearest even, identical on every target. */
POSENC_API posenc_status posenc_convert_to_f32(const void* src, posenc_dtype dtype, size_t n,
                                               float* dst);
POSENC_API posenc_status posenc_convert_from_f32(const float* src, size_t n, posenc_dtype dtype,
                                                 void* dst);

/* Version "MAJOR.MINOR.PATCH" and SIMD targets. Strings are static. */
POSENC_API const char* posenc_version(void);
POSENC_API const char* posenc_chosen_target(void); /* "" if POSENC_MAX_TARGET is invalid */
/* Space-separated target names into buf (NUL-terminated, truncated to capacity); returns the
 * length the full list needs (excluding the NUL); 0, with posenc_last_error() set, if the library
 * runs out of memory building the list. */
POSENC_API size_t posenc_supported_targets(char* buf, size_t capacity);
POSENC_API size_t posenc_compiled_targets(char* buf, size_t capacity);
/* AVX3, AVX2, SSE4, SSSE3, SCALAR; "" or NULL removes the cap. */
POSENC_API posenc_status posenc_set_max_target(const char* name);

/* The message of the last failing call on this thread ("" if none). */
POSENC_API const char* posenc_last_error(void);
POSENC_API const char* posenc_status_name(posenc_status status);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif  /* POSENC_POSENC_H_ */
