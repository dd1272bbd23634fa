// Dispatch TU: sinusoidal encodings on f16 tensors (one TU per dtype so -j2 overlaps compilation).
#define POSENC_DTYPE F16
#define HWY_TARGET_INCLUDE "lib/kernels/sinusoidal_f16.cc"
#include "lib/kernels/sinusoidal_static-inl.h"
