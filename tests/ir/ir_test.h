/* Helpers shared by the IR tests: checks that report and count failures, field descriptors,
 * and comparison of printed IR against text written by hand. */
#ifndef PLUME_TESTS_IR_TEST_H
#define PLUME_TESTS_IR_TEST_H

#include "engine/ir/ir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"

/* Compares text with what was expected; prints both on a difference. Frees text. */
#define CHECK_TEXT(text, expected) check_text(__FILE__, __LINE__, (text), (expected))

static inline void check_text(const char *file, int line, char *text, const char *expected)
{
    if (!text || strcmp(text, expected) != 0) {
        fprintf(stderr, "%s:%d: text differs\n--- expected\n%s--- got\n%s---\n", file, line,
                expected, text ? text : "(null)");
        check_failures++;
    }
    free(text);
}

/* A field: levels given as kinds and log2 sizes (same on every axis of the field's dim);
 * the root is added in front. */
static inline ir_field_info make_field(const char *name, ir_type elem, int comps, int dim,
                                       int nlev, const int *kinds, const int *log2)
{
    ir_field_info f;
    memset(&f, 0, sizeof f);
    snprintf(f.name, sizeof f.name, "%s", name);
    f.elem = elem;
    f.components = (uint8_t)comps;
    f.dim = (uint8_t)dim;
    f.nlevels = (uint8_t)(nlev + 1);
    f.levels[0].kind = IR_KIND_ROOT;
    f.levels[0].rt_snode = 0;
    for (int l = 0; l < nlev; l++) {
        f.levels[l + 1].kind = (uint8_t)kinds[l];
        for (int a = 0; a < dim; a++)
            f.levels[l + 1].log2_size[a] = (uint8_t)log2[l];
        f.levels[l + 1].rt_snode = l + 1;
    }
    return f;
}

/* 1-D dense field of 2^10 cells. */
static inline ir_field_info dense1(const char *name)
{
    static const int k[] = {IR_KIND_DENSE}, s[] = {10};
    return make_field(name, IR_F32, 1, 1, 1, k, s);
}

/* 3-D field with OpenVDB's shape below the root: pointer(5).pointer(4).dense(3). */
static inline ir_field_info sparse3(const char *name, int comps)
{
    static const int k[] = {IR_KIND_POINTER, IR_KIND_POINTER, IR_KIND_DENSE}, s[] = {5, 4, 3};
    return make_field(name, IR_F32, comps, 3, 3, k, s);
}

/* 3-D field pointer(4).bitmasked(3): per-voxel activity. */
static inline ir_field_info bitmasked3(const char *name)
{
    static const int k[] = {IR_KIND_POINTER, IR_KIND_BITMASKED}, s[] = {4, 3};
    return make_field(name, IR_F32, 1, 3, 2, k, s);
}

/* A 0-D field: one dense cell below the root. */
static inline ir_field_info scalar0(const char *name)
{
    static const int k[] = {IR_KIND_DENSE}, s[] = {0};
    return make_field(name, IR_F32, 1, 0, 1, k, s);
}

static inline void must_verify(ir_task *t, const char *what)
{
    char err[512];
    if (ir_verify(t, err, sizeof err) != 0) {
        fprintf(stderr, "%s: verifier: %s\n", what, err);
        check_failures++;
    }
}

static inline int ir_test_result(const char *name)
{
    if (check_failures) {
        fprintf(stderr, "%s: %d failure(s)\n", name, check_failures);
        return 1;
    }
    printf("%s: ok\n", name);
    return 0;
}

#endif
