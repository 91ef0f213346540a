/* Internals shared by the engine's own files; plugin/ uses engine.h only. */
#ifndef PLUME_ENGINE_INTERNAL_H
#define PLUME_ENGINE_INTERNAL_H

#include "engine/engine.h"

struct eng_context {
    int threads;
    uint64_t budget;
    eng_field **fields;
    int nfields;
    char err[1024];
};

int eng_fail(eng_context *ctx, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

int eng_field_new(eng_context *ctx, const eng_field_desc *desc, eng_field **out);
void eng_field_free(eng_field *f);
uint64_t eng_field_bytes(eng_field *f);

#endif
