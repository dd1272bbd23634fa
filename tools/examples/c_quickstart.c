/* The README's C example: RoPE on q and k in place through the C API. Built by the tests. */
#include <stdio.h>

#include "posenc/posenc.h"

int main(void) {
  static float q[16 * 32 * 128], k[16 * 8 * 128];  /* [tokens, heads, head_dim] */
  posenc_tensor tq = posenc_tensor_bshd(q, POSENC_F32, 1, 16, 32, 128);
  posenc_tensor tk = posenc_tensor_bshd(k, POSENC_F32, 1, 16, 8, 128);
  posenc_rope_params params;
  posenc_config* config = NULL;

  posenc_rope_params_init(&params);  /* half pairs, positions from 0, computed on the fly */
  params.base = 500000.0;
  if (posenc_rope_apply(&tq, NULL, &tk, NULL, &params) != POSENC_OK) {
    fprintf(stderr, "rope: %s\n", posenc_last_error());
    return 1;
  }
  /* Frequencies from a model's config.json instead; errors name the argument. */
  if (posenc_config_load("no/such/config.json", &config) != POSENC_OK) {
    printf("expected error: %s\n", posenc_last_error());
  }
  printf("posenc %s on %s\n", posenc_version(), posenc_chosen_target());
  return 0;
}
