/* One public header on its own (compiled as C++17 and, for posenc/posenc.h, as C99 by the
 * public_header_* ctests): POSENC_HEADER is given as -DPOSENC_HEADER=<posenc/name.h>. */
#include POSENC_HEADER

int main(void) { return 0; }
