/* Stencils along long leaf rows (dense(i, 1024), the default 1-D layout's 512-cell blocks, a
 * 2-D leaf of 256-cell rows) compile in a few seconds and read the right neighbours, across
 * block edges and past the field's end. The code generator used to ask LLVM to unroll the cell
 * loop of such a struct-for whole: dense(i, 1024) with five neighbour reads took 28 s to
 * compile, a five-statement kernel on the default 1-D layout more than 600 s and 5.7 GB (ctest's
 * timeout of 120 s fails the test then). Expected values come from the kernels' formulas. */
#include "engine_test.h"

static eng_context *ctx;

static const float BG = -1.0f;

static const char *SRC_1D =
    "kernel fill(field<f32, 1> a, field<f32, 1> b, i32 n) {\n"
    "    for (i in 0 .. n) { a[i] = f32(i % 97); b[i] = f32(i % 89) * 0.5; }\n"
    "}\n"
    "kernel sten(field<f32, 1> a, field<f32, 1> b, field<f32, 1> o) {\n"
    "    for (i in a) { o[i] = a[i - 1] + a[i + 1] + b[i + 5] + b[i - 7] + b[i + 9]; }\n"
    "}\n";

static float ref_a(int i, int n) { return i < 0 || i >= n ? BG : (float)(i % 97); }
static float ref_b(int i, int n) { return i < 0 || i >= n ? BG : (float)(i % 89) * 0.5f; }

static void rows_1d(const char *tag, const char *layout, int n)
{
    char an[32], bn[32], on[32];
    snprintf(an, sizeof an, "a%s", tag);
    snprintf(bn, sizeof bn, "b%s", tag);
    snprintf(on, sizeof on, "o%s", tag);
    eng_field *a = et_field_layout(ctx, an, layout, ENG_F32, BG);
    eng_field *b = et_field_layout(ctx, bn, layout, ENG_F32, BG);
    eng_field *o = et_field_layout(ctx, on, layout, ENG_F32, 0);
    eng_program *p = et_compile(ctx, SRC_1D);
    eng_arg fa[3] = {et_f(a), et_f(b), et_s(n)}, sa[3] = {et_f(a), et_f(b), et_f(o)};
    if (!a || !b || !o || !p || et_run(ctx, p, "fill", fa, 3) || et_run(ctx, p, "sten", sa, 3))
        return;
    int bad = 0;
    for (int i = 0; i < n; i++) {
        float want = ref_a(i - 1, n) + ref_a(i + 1, n) + ref_b(i + 5, n) + ref_b(i - 7, n) + ref_b(i + 9, n);
        float got = et_at(o, i, 0, 0, 0);
        if (got != want && bad++ < 4)
            fprintf(stderr, "%s i=%d: %g (want %g)\n", layout, i, (double)got, (double)want);
    }
    CHECK_EQ(bad, 0);
}

static void rows_2d(void)
{
    const char *L = "dense(ij,4).dense(ij,256)";
    eng_field *a = et_field_layout(ctx, "a2", L, ENG_F32, BG), *o = et_field_layout(ctx, "o2", L, ENG_F32, 0);
    eng_program *p = et_compile(ctx,
        "kernel fill(field<f32, 2> a) { for (P in ivec2(0) .. ivec2(8, 600)) { a[P] = f32(P.x * 1000 + P.y); } }\n"
        "kernel sten(field<f32, 2> a, field<f32, 2> o) {\n"
        "    for (P in a) { o[P] = a[P + ivec2(0, 1)] - a[P - ivec2(0, 3)] + a[P + ivec2(1, 0)]; }\n"
        "}\n");
    eng_arg fa[1] = {et_f(a)}, sa[2] = {et_f(a), et_f(o)};
    if (!a || !o || !p || et_run(ctx, p, "fill", fa, 1) || et_run(ctx, p, "sten", sa, 2))
        return;
    int bad = 0;
    for (int x = 0; x < 8; x++)
        for (int y = 0; y < 600; y++) {
#define A(X, Y) ((X) < 0 || (X) >= 8 || (Y) < 0 || (Y) >= 600 ? BG : (float)((X) * 1000 + (Y)))
            float want = A(x, y + 1) - A(x, y - 3) + A(x + 1, y);
#undef A
            float got = et_at(o, x, y, 0, 0);
            if (got != want && bad++ < 4)
                fprintf(stderr, "%s (%d, %d): %g (want %g)\n", L, x, y, (double)got, (double)want);
        }
    CHECK_EQ(bad, 0);
}

int main(void)
{
    ctx = et_context(2);
    rows_1d("1", "dense(i,1024)", 1024);
    /* the default 1-D layout (pointer(i,4096).dense(i,512)): rows across three blocks */
    rows_1d("d", eng_default_layout(1), 1400);
    rows_2d();
    eng_destroy(ctx);
    CHECK_DONE();
}
