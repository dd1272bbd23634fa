/* posenc/export.h: symbol visibility. The library is built with hidden visibility; only what is
 * marked POSENC_API (the posenc_* C functions and the posenc:: C++ API) is exported. */
#ifndef POSENC_EXPORT_H_
#define POSENC_EXPORT_H_

#if defined(_WIN32)
#define POSENC_API
#else
#define POSENC_API __attribute__((visibility("default")))
#endif

#endif  /* POSENC_EXPORT_H_ */
