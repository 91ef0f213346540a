/* Reads and activity queries past a field's edge, in a struct-for (the code path that looks up
 * a cell's neighbouring blocks once per block): an index outside a field is never active and
 * reads the field's background (docs/language.md), whatever the layout. On layouts of one
 * dense level (dense(i, 16), dense(ij, 16), offset(-16).dense(ijk, 32)) the neighbour block
 * past the end was the block at the other end: b[i - 1] at i = 0 read b[15]. Fields whose
 * blocks start a block away from the loop's read their background outside their own range,
 * and a write there is reported as outside the field. The host reads a 1-D field's voxel i at
 * (i, 0, 0) whatever the layout's offset on the axes it does not have. Expected values come
 * from the kernels' formulas here. */
#include "engine_test.h"

static eng_context *ctx;

static const float BG = -5.0f;

static void one_level_1d(void)
{
    const char *L = "dense(i,16)";
    eng_field *a = et_field_layout(ctx, "a1", L, ENG_F32, BG), *b = et_field_layout(ctx, "b1", L, ENG_F32, BG);
    eng_field *lo = et_field_layout(ctx, "lo1", L, ENG_F32, 0), *hi = et_field_layout(ctx, "hi1", L, ENG_F32, 0);
    eng_field *act = et_field_layout(ctx, "act1", L, ENG_F32, 0);
    eng_program *p = et_compile(ctx,
        "kernel fill(field<f32, 1> a, field<f32, 1> b) { for (i in 0 .. 16) { a[i] = 1.0; b[i] = f32(i + 1); } }\n"
        "kernel probe(field<f32, 1> a, field<f32, 1> b, field<f32, 1> lo, field<f32, 1> hi, field<f32, 1> act) {\n"
        "    for (i in a) { lo[i] = b[i - 1]; hi[i] = b[i + 3]; act[i] = is_active(b, i + 3) ? 1.0 : 0.0; }\n"
        "}\n");
    eng_arg fa[2] = {et_f(a), et_f(b)}, pa[5] = {et_f(a), et_f(b), et_f(lo), et_f(hi), et_f(act)};
    if (!p || et_run(ctx, p, "fill", fa, 2) || et_run(ctx, p, "probe", pa, 5))
        return;
    int bad = 0;
    for (int i = 0; i < 16; i++) {
        float want_lo = i == 0 ? BG : (float)i, want_hi = i + 3 < 16 ? (float)(i + 4) : BG;
        float want_act = i + 3 < 16 ? 1.0f : 0.0f;
        if (et_at(lo, i, 0, 0, 0) != want_lo || et_at(hi, i, 0, 0, 0) != want_hi || et_at(act, i, 0, 0, 0) != want_act) {
            if (bad++ < 4)
                fprintf(stderr, "1-D i=%d: lo %g (want %g) hi %g (want %g) active %g (want %g)\n", i,
                        (double)et_at(lo, i, 0, 0, 0), (double)want_lo, (double)et_at(hi, i, 0, 0, 0),
                        (double)want_hi, (double)et_at(act, i, 0, 0, 0), (double)want_act);
        }
    }
    CHECK_EQ(bad, 0);
}

static void one_level_2d(void)
{
    const char *L = "dense(ij,16)";
    eng_field *a = et_field_layout(ctx, "a2", L, ENG_F32, BG), *b = et_field_layout(ctx, "b2", L, ENG_F32, BG);
    eng_field *lo = et_field_layout(ctx, "lo2", L, ENG_F32, 0), *hi = et_field_layout(ctx, "hi2", L, ENG_F32, 0);
    eng_program *p = et_compile(ctx,
        "kernel fill(field<f32, 2> a, field<f32, 2> b) {\n"
        "    for (P in ivec2(0) .. ivec2(16)) { a[P] = 1.0; b[P] = f32(P.x * 100 + P.y + 1); }\n"
        "}\n"
        "kernel probe(field<f32, 2> a, field<f32, 2> b, field<f32, 2> lo, field<f32, 2> hi) {\n"
        "    for (P in a) { lo[P] = b[P - ivec2(1, 0)]; hi[P] = b[P + ivec2(0, 2)]; }\n"
        "}\n");
    eng_arg fa[2] = {et_f(a), et_f(b)}, pa[4] = {et_f(a), et_f(b), et_f(lo), et_f(hi)};
    if (!p || et_run(ctx, p, "fill", fa, 2) || et_run(ctx, p, "probe", pa, 4))
        return;
    int bad = 0;
    for (int x = 0; x < 16; x++)
        for (int y = 0; y < 16; y++) {
            float want_lo = x == 0 ? BG : (float)((x - 1) * 100 + y + 1);
            float want_hi = y + 2 < 16 ? (float)(x * 100 + y + 3) : BG;
            bad += et_at(lo, x, y, 0, 0) != want_lo || et_at(hi, x, y, 0, 0) != want_hi;
        }
    CHECK_EQ(bad, 0);
}

static void one_level_3d_offset(void)
{
    const char *L = "offset(-16).dense(ijk,32)";
    eng_field *b = et_field_layout(ctx, "b3", L, ENG_F32, BG), *lo = et_field_layout(ctx, "lo3", L, ENG_F32, 0);
    eng_field *act = et_field_layout(ctx, "act3", L, ENG_F32, 0);
    eng_program *p = et_compile(ctx,
        "kernel fill(field<f32> b) { for (P in ivec3(-16) .. ivec3(16)) { b[P] = f32(P.x + 100); } }\n"
        "kernel probe(field<f32> b, field<f32> lo, field<f32> act) {\n"
        "    for (I in b) { lo[I] = b[I - ivec3(1, 0, 0)]; act[I] = is_active(b, I + ivec3(0, 3, 0)) ? 1.0 : 0.0; }\n"
        "}\n");
    eng_arg fa[1] = {et_f(b)}, pa[3] = {et_f(b), et_f(lo), et_f(act)};
    if (!p || et_run(ctx, p, "fill", fa, 1) || et_run(ctx, p, "probe", pa, 3))
        return;
    int bad = 0;
    for (int x = -16; x < 16; x++)
        for (int y = -16; y < 16; y += 5)
            for (int z = -16; z < 16; z += 7) {
                float want_lo = x == -16 ? BG : (float)(x - 1 + 100), want_act = y + 3 < 16 ? 1.0f : 0.0f;
                bad += et_at(lo, x, y, z, 0) != want_lo || et_at(act, x, y, z, 0) != want_act;
            }
    CHECK_EQ(bad, 0);
}

/* c's one block covers 16..31, the loop's field a 0..15: every c[i] the loop reads is outside
 * c (it read c[i + 16]), and a write there is an error, not a write to c[i + 16]. */
static void other_offset(void)
{
    eng_field *a = et_field_layout(ctx, "a4", "dense(i,16)", ENG_F32, BG);
    eng_field *c = et_field_layout(ctx, "c4", "offset(16).dense(i,16)", ENG_F32, BG);
    eng_field *o = et_field_layout(ctx, "o4", "dense(i,16)", ENG_F32, 0);
    eng_program *p = et_compile(ctx,
        "kernel fill(field<f32, 1> a, field<f32, 1> c) { for (i in 0 .. 16) { a[i] = 1.0; c[i + 16] = f32(i + 16); } }\n"
        "kernel probe(field<f32, 1> a, field<f32, 1> c, field<f32, 1> o) { for (i in a) { o[i] = c[i] + c[i + 16]; } }\n"
        "kernel poke(field<f32, 1> a, field<f32, 1> c) { for (i in a) { c[i] = 7.0; } }\n");
    eng_arg fa[2] = {et_f(a), et_f(c)}, pa[3] = {et_f(a), et_f(c), et_f(o)};
    if (!p || et_run(ctx, p, "fill", fa, 2) || et_run(ctx, p, "probe", pa, 3))
        return;
    int bad = 0;
    for (int i = 0; i < 16; i++)
        bad += et_at(o, i, 0, 0, 0) != BG + (float)(i + 16);
    CHECK_EQ(bad, 0);
    eng_kernel *k = eng_program_find(p, "poke");
    int rc = eng_launch(ctx, k, fa, 2);
    if (rc == ENG_OK)
        rc = eng_sync(ctx);
    /* a 1-D field's range is one range */
    CHECK(rc != ENG_OK && strstr(eng_error(ctx), "kernel 'poke' wrote outside the voxels the field can hold (16..31);"));
    bad = 0;
    for (int i = 16; i < 32; i++)
        bad += et_at(c, i, 0, 0, 0) != (float)i;
    CHECK_EQ(bad, 0);
}

int main(void)
{
    ctx = et_context(2);
    one_level_1d();
    one_level_2d();
    one_level_3d_offset();
    other_offset();
    eng_destroy(ctx);
    CHECK_DONE();
}
