/* Kernel-language features over 1-D and 2-D fields, each compared with the same computation
 * written in C: integer and float arithmetic, builtins, vectors and matrices, control flow,
 * functions, short-circuit evaluation and parallel boxes. */
#include "engine_test.h"

#include <stdint.h>

#define N 200

static eng_context *ctx;

/* floored division and modulo of the language (docs/language.md, section 3) */
static int32_t fdiv(int32_t a, int32_t b)
{
    if (b == 0)
        return 0;
    int32_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
        q--;
    return q;
}
static int32_t fmod_i(int32_t a, int32_t b) { return b == 0 ? 0 : a - b * fdiv(a, b); }

static void test_fill(void)
{
    eng_field *a = et_field(ctx, "fill_a", 1, ENG_F32, -1.0f);
    eng_program *p = et_compile(ctx,
        "kernel fill(field<f32, 1> a, f32 s, i32 n) {\n"
        "    for (i in 0 .. n) { a[i] = s * f32(i) + 1.0; }\n"
        "}\n");
    eng_arg args[3] = {et_f(a), et_s(0.25), et_s(N)};
    if (et_run(ctx, p, "fill", args, 3))
        return;
    for (int i = 0; i < N; i++)
        CHECK(et_at(a, i, 0, 0, 0) == 0.25f * (float)i + 1.0f);
    CHECK(et_at(a, N, 0, 0, 0) == -1.0f); /* untouched: background */
}

static void test_ints(void)
{
    eng_field *o[5];
    const char *names[5] = {"i_div", "i_mod", "i_bits", "i_u32", "i_i64"};
    for (int k = 0; k < 5; k++)
        o[k] = et_field(ctx, names[k], 1, ENG_F32, 0.0f);
    eng_program *p = et_compile(ctx,
        "kernel ints(field<f32, 1> d, field<f32, 1> m, field<f32, 1> b, field<f32, 1> u,\n"
        "            field<f32, 1> w) {\n"
        "    for (i in 0 .. 200) {\n"
        "        i32 x = i - 100;\n"
        "        i32 y = (i % 7) - 3;\n"
        "        d[i] = f32(x / y);\n"
        "        m[i] = f32(x % y);\n"
        "        b[i] = f32(((x & 12) | (i ^ 5)) + (i << 2) - (x >> 1) + ~i);\n"
        "        u32 h = (u32(i) * 2654435761u) >> 20u;\n"
        "        u[i] = f32(h);\n"
        "        i64 big = i64(x) * (i64(3) * i64(1000000000));\n"
        "        w[i] = f32(big / i64(7)) * 1e-6;\n"
        "    }\n"
        "}\n");
    eng_arg args[5];
    for (int k = 0; k < 5; k++)
        args[k] = et_f(o[k]);
    if (et_run(ctx, p, "ints", args, 5))
        return;
    for (int i = 0; i < N; i++) {
        int32_t x = i - 100, y = (i % 7) - 3;
        CHECK(et_at(o[0], i, 0, 0, 0) == (float)fdiv(x, y));
        CHECK(et_at(o[1], i, 0, 0, 0) == (float)fmod_i(x, y));
        int32_t bits = ((x & 12) | (i ^ 5)) + (i << 2) - (x >> 1) + ~i;
        CHECK(et_at(o[2], i, 0, 0, 0) == (float)bits);
        uint32_t h = ((uint32_t)i * 2654435761u) >> 20;
        CHECK(et_at(o[3], i, 0, 0, 0) == (float)h);
        int64_t big = (int64_t)x * 3000000000LL;
        int64_t q = big / 7;
        if (big % 7 != 0 && big < 0)
            q--;
        CHECK(et_at(o[4], i, 0, 0, 0) == (float)q * 1e-6f);
    }
}

static void test_float_builtins(void)
{
    eng_field *o[6];
    const char *names[6] = {"fb0", "fb1", "fb2", "fb3", "fb4", "fb5"};
    for (int k = 0; k < 6; k++)
        o[k] = et_field(ctx, names[k], 1, ENG_F32, 0.0f);
    eng_program *p = et_compile(ctx,
        "kernel fl(field<f32, 1> o0, field<f32, 1> o1, field<f32, 1> o2, field<f32, 1> o3,\n"
        "          field<f32, 1> o4, field<f32, 1> o5) {\n"
        "    for (i in 0 .. 200) {\n"
        "        f32 x = f32(i) * 0.05 + 0.025;\n"
        "        o0[i] = sqrt(x) + exp(x * 0.1) + log(x);\n"
        "        o1[i] = sin(x) + cos(x) + tan(x * 0.1);\n"
        "        o2[i] = atan2(x - 3.0, 1.5) + pow(x, 1.7);\n"
        "        o3[i] = floor(x * 3.0) + ceil(x * 3.0) * 10.0 + fract(x * 3.0) + round(x * 3.0) * 100.0 + trunc(-x * 3.0) * 1000.0;\n"
        "        o4[i] = abs(2.0 - x) + sign(3.0 - x) + min(x, 2.0) + max(x, 2.0) + clamp(x, 1.0, 4.0) + lerp(1.0, 5.0, x * 0.1);\n"
        "        f64 xd = f64(x);\n"
        "        o5[i] = f32(sqrt(xd) * 2.0 + f64(i) / 3.0);\n"
        "    }\n"
        "}\n");
    eng_arg args[6];
    for (int k = 0; k < 6; k++)
        args[k] = et_f(o[k]);
    if (et_run(ctx, p, "fl", args, 6))
        return;
    for (int i = 0; i < N; i++) {
        float x = (float)i * 0.05f + 0.025f;
        CHECK_NEAR(et_at(o[0], i, 0, 0, 0), sqrtf(x) + expf(x * 0.1f) + logf(x), 1e-5);
        CHECK_NEAR(et_at(o[1], i, 0, 0, 0), sinf(x) + cosf(x) + tanf(x * 0.1f), 1e-5);
        CHECK_NEAR(et_at(o[2], i, 0, 0, 0), atan2f(x - 3.0f, 1.5f) + powf(x, 1.7f), 1e-5);
        float x3 = x * 3.0f;
        CHECK_NEAR(et_at(o[3], i, 0, 0, 0),
                   floorf(x3) + ceilf(x3) * 10.0f + (x3 - floorf(x3)) + roundf(x3) * 100.0f +
                       truncf(-x3) * 1000.0f, 1e-5);
        float sg = (3.0f - x) > 0 ? 1.0f : (3.0f - x) < 0 ? -1.0f : 0.0f;
        CHECK_NEAR(et_at(o[4], i, 0, 0, 0),
                   fabsf(2.0f - x) + sg + fminf(x, 2.0f) + fmaxf(x, 2.0f) +
                       fminf(fmaxf(x, 1.0f), 4.0f) + (1.0f + 4.0f * x * 0.1f), 1e-5);
        CHECK_NEAR(et_at(o[5], i, 0, 0, 0), (float)(sqrt((double)x) * 2.0 + (double)i / 3.0), 1e-6);
    }
}

/* lerp(a, b, t) is (b - a) * t + a rounded once (docs/language.md): bit for bit fmaf in C,
 * which for these inputs differs from rounding the product first in some elements (the
 * check that the two ways can be told apart here). */
static void test_lerp_rounding(void)
{
    eng_field *o = et_field(ctx, "lr", 1, ENG_F32, 0.0f);
    eng_field *v = et_field(ctx, "lrv", 1, ENG_VEC3, 0.0f);
    eng_program *p = et_compile(ctx,
        "kernel lr(field<f32, 1> o, field<vec3, 1> v) {\n"
        "    for (i in 0 .. 200) {\n"
        "        f32 a = 1.0 + f32(i) * 0.013;\n"
        "        f32 b = 3.0 - f32(i) * 0.007;\n"
        "        f32 t = f32(i) * 0.0031 + 0.1;\n"
        "        o[i] = lerp(a, b, t);\n"
        "        v[i] = lerp(vec3(a, b, t), vec3(b, t, a), t);\n"
        "    }\n"
        "}\n");
    eng_arg args[2] = {et_f(o), et_f(v)};
    if (et_run(ctx, p, "lr", args, 2))
        return;
    int differ = 0;
    for (int i = 0; i < N; i++) {
        /* volatile products: a C compiler allowed to contract must not fuse these */
        volatile float pa = (float)i * 0.013f, pb = (float)i * 0.007f, pt = (float)i * 0.0031f;
        float a = 1.0f + pa, b = 3.0f - pb, t = pt + 0.1f;
        float want = fmaf(b - a, t, a);
        volatile float prod = (b - a) * t; /* rounded on its own */
        differ += prod + a != want;
        CHECK(et_at(o, i, 0, 0, 0) == want);
        CHECK(et_at(v, i, 0, 0, 0) == want);
        CHECK(et_at(v, i, 0, 0, 1) == fmaf(t - b, t, b));
        CHECK(et_at(v, i, 0, 0, 2) == fmaf(a - t, t, t));
    }
    CHECK(differ > 0);
}

/* A constant folds min, max, sign and clamp as the generated code computes them: a NaN
 * operand of min or max yields the other one (IEEE minNum/maxNum), sign(NaN) is 0, clamp is
 * min(max(x, lo), hi) (lo > hi gives hi). The constants said NaN, NaN, NaN and 3 where the
 * same expressions at run time gave 1, 0, 0 and 1. length and dot of vectors are computed in
 * f32 (a constant length of 1e20 was 1e20, inf at run time), and lerp with one rounding (a
 * constant lerp(1, 33554436, 0.5) was 16777218, 16777220 at run time). */
static void test_const_like_run(void)
{
    eng_field *o = et_field(ctx, "clr", 1, ENG_F32, -9.0f);
    eng_program *p = et_compile(ctx,
        "const f32 A = min(1.0, 0.0 / 0.0);\n"
        "const f32 B = sign(0.0 / 0.0);\n"
        "const f32 C = clamp(0.0 / 0.0, 0.0, 1.0);\n"
        "const f32 D = clamp(0.0, 3.0, 1.0);\n"
        "const i32 E = clamp(0, 3, 1);\n"
        "const f32 F = max(0.0 / 0.0, 2.0);\n"
        "const f32 G = length(vec3(1e20, 0.0, 0.0));\n"
        "const f32 H = length(vec3(0.1, 0.2, 0.3));\n"
        "const f32 K = dot(vec3(0.1, 0.7, 0.3), vec3(1.3, 0.2, 0.9));\n"
        "const f32 M = lerp(1.0, 33554436.0, 0.5);\n"
        "kernel cm(field<f32, 1> o, f32 z) {\n"
        "    for (i in 0 .. 1) {\n"
        "        f32 n = z / z;\n"
        "        o[0] = A; o[1] = min(1.0, n);\n"
        "        o[2] = B; o[3] = sign(n);\n"
        "        o[4] = C; o[5] = clamp(n, 0.0, 1.0);\n"
        "        o[6] = D; o[7] = clamp(z, 3.0, 1.0);\n"
        "        o[8] = f32(E); o[9] = f32(clamp(i32(z), 3, 1));\n"
        "        o[10] = F; o[11] = max(n, 2.0);\n"
        "        o[12] = G; o[13] = length(vec3(1e20 + z, 0.0, 0.0));\n"
        "        o[14] = H; o[15] = length(vec3(0.1 + z, 0.2, 0.3));\n"
        "        o[16] = K; o[17] = dot(vec3(0.1 + z, 0.7, 0.3), vec3(1.3, 0.2, 0.9));\n"
        "        o[18] = M; o[19] = lerp(1.0 + z, 33554436.0, 0.5);\n"
        "    }\n"
        "}\n");
    eng_arg args[2] = {et_f(o), et_s(0.0)};
    if (et_run(ctx, p, "cm", args, 2))
        return;
    /* f32 all the way: 1e20 squared overflows; each product and sum rounded */
    volatile float h = 0.1f * 0.1f, h2 = 0.2f * 0.2f, h3 = 0.3f * 0.3f, hs = h + h2;
    hs = hs + h3;
    volatile float k1 = 0.1f * 1.3f, k2 = 0.7f * 0.2f, k3 = 0.3f * 0.9f, ks = k1 + k2;
    ks = ks + k3;
    volatile float big = 33554436.0f, one = 1.0f, diff = big - one;
    const float want[10] = {1.0f, 0.0f, 0.0f, 1.0f, 1.0f, 2.0f, INFINITY, sqrtf(hs), ks, fmaf(diff, 0.5f, one)};
    for (int k = 0; k < 10; k++) {
        CHECK(et_at(o, 2 * k, 0, 0, 0) == want[k]);
        CHECK(et_at(o, 2 * k + 1, 0, 0, 0) == want[k]);
    }
}

static void test_vectors(void)
{
    eng_field *s = et_field(ctx, "vs", 1, ENG_F32, 0.0f);
    eng_field *m = et_field(ctx, "vm", 1, ENG_F32, 0.0f);
    eng_field *v = et_field(ctx, "vv", 1, ENG_VEC3, 0.0f);
    eng_program *p = et_compile(ctx,
        "kernel vecs(field<f32, 1> s, field<f32, 1> m, field<vec3, 1> v) {\n"
        "    for (i in 0 .. 200) {\n"
        "        f32 x = f32(i) * 0.1;\n"
        "        vec3 a = vec3(x, 2.0 * x, 1.0 - x);\n"
        "        vec3 b = vec3(0.5, -x, 3.0);\n"
        "        s[i] = dot(a, b) + length(cross(a, b)) + a.zy.x * 10.0;\n"
        "        mat3 r = mat3(a, b, vec3(1.0, 0.0, x));\n"
        "        vec3 ra = r * a;\n"
        "        m[i] = determinant(r) + (transpose(r) * a).y + ra.z + r[1].y;\n"
        "        vec3 n = normalize(a + vec3(1.0));\n"
        "        n.y += 2.0;\n"
        "        v[i] = n;\n"
        "        v[i].z *= 2.0;\n"
        "    }\n"
        "}\n");
    eng_arg args[3] = {et_f(s), et_f(m), et_f(v)};
    if (et_run(ctx, p, "vecs", args, 3))
        return;
    for (int i = 0; i < N; i++) {
        float x = (float)i * 0.1f;
        float a[3] = {x, 2.0f * x, 1.0f - x}, b[3] = {0.5f, -x, 3.0f};
        float dot = a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
        float cr[3] = {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
        float want = dot + sqrtf(cr[0] * cr[0] + cr[1] * cr[1] + cr[2] * cr[2]) + a[2] * 10.0f;
        CHECK_NEAR(et_at(s, i, 0, 0, 0), want, 1e-5);
        /* columns a, b, c = (1, 0, x); r[row][col] */
        float c[3] = {1.0f, 0.0f, x};
        float r[3][3];
        for (int k = 0; k < 3; k++) {
            r[k][0] = a[k];
            r[k][1] = b[k];
            r[k][2] = c[k];
        }
        float det = r[0][0] * (r[1][1] * r[2][2] - r[1][2] * r[2][1]) -
                    r[0][1] * (r[1][0] * r[2][2] - r[1][2] * r[2][0]) +
                    r[0][2] * (r[1][0] * r[2][1] - r[1][1] * r[2][0]);
        float rta_y = r[0][1] * a[0] + r[1][1] * a[1] + r[2][1] * a[2]; /* (r^T a).y */
        float ra_z = r[2][0] * a[0] + r[2][1] * a[1] + r[2][2] * a[2];
        CHECK_NEAR(et_at(m, i, 0, 0, 0), det + rta_y + ra_z + b[1], 1e-5);
        float u[3] = {a[0] + 1.0f, a[1] + 1.0f, a[2] + 1.0f};
        float l = sqrtf(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
        CHECK_NEAR(et_at(v, i, 0, 0, 0), u[0] / l, 1e-5);
        CHECK_NEAR(et_at(v, i, 0, 0, 1), u[1] / l + 2.0f, 1e-5);
        CHECK_NEAR(et_at(v, i, 0, 0, 2), 2.0f * u[2] / l, 1e-5);
    }
}

static int collatz(int n)
{
    int steps = 0;
    while (n != 1) {
        n = n % 2 == 0 ? n / 2 : 3 * n + 1;
        steps++;
        if (steps > 1000)
            break;
    }
    return steps;
}

static void test_control(void)
{
    eng_field *a = et_field(ctx, "ctl_a", 1, ENG_F32, 0.0f);
    eng_field *b = et_field(ctx, "ctl_b", 1, ENG_F32, 0.0f);
    eng_program *p = et_compile(ctx,
        "func i32 collatz_steps(i32 n0) {\n"
        "    i32 n = n0;\n"
        "    i32 steps = 0;\n"
        "    while (n != 1) {\n"
        "        if (n % 2 == 0) { n = n / 2; } else { n = 3 * n + 1; }\n"
        "        steps += 1;\n"
        "        if (steps > 1000) break;\n"
        "    }\n"
        "    return steps;\n"
        "}\n"
        "func i32 first_multiple(i32 k, i32 limit) {\n"
        "    for (j in 1 .. limit) {\n"
        "        if (j % k == 0 && j > 10) { return j; }\n"
        "    }\n"
        "    return -1;\n"
        "}\n"
        "kernel ctl(field<f32, 1> a, field<f32, 1> b, i32 n) {\n"
        "    for (i in 0 .. n) {\n"
        "        f32 acc = 0.0;\n"
        "        for (j in 0 .. i) {\n"
        "            if (j % 3 == 0) continue;\n"
        "            acc += f32(j);\n"
        "        }\n"
        "        a[i] = acc + f32(collatz_steps(i + 1));\n"
        "        i32 s = 0;\n"
        "        for (static d in -2 .. 3) { s += d * d * (i + d); }\n"
        "        f32 sel = i % 2 == 0 ? 1.0 : -1.0;\n"
        "        if (i < 50) { b[i] = f32(s) * sel; }\n"
        "        else if (i < 100) { b[i] = f32(first_multiple(i % 7 + 1, 40)); }\n"
        "        else { b[i] = 7.0; }\n"
        "    }\n"
        "}\n");
    eng_arg args[3] = {et_f(a), et_f(b), et_s(N)};
    if (et_run(ctx, p, "ctl", args, 3))
        return;
    for (int i = 0; i < N; i++) {
        float acc = 0;
        for (int j = 0; j < i; j++)
            if (j % 3 != 0)
                acc += (float)j;
        CHECK(et_at(a, i, 0, 0, 0) == acc + (float)collatz(i + 1));
        int s = 0;
        for (int d = -2; d < 3; d++)
            s += d * d * (i + d);
        float want;
        if (i < 50) {
            want = (float)s * (i % 2 == 0 ? 1.0f : -1.0f);
        } else if (i < 100) {
            int k = i % 7 + 1, r = -1;
            for (int j = 1; j < 40; j++)
                if (j % k == 0 && j > 10) {
                    r = j;
                    break;
                }
            want = (float)r;
        } else {
            want = 7.0f;
        }
        CHECK(et_at(b, i, 0, 0, 0) == want);
    }
}

/* && and ?: evaluate their right side only when needed: a read at index -1 would be out of
 * the 1-D field's range (recorded as an error at the next sync). */
static void test_short_circuit(void)
{
    eng_field *a = et_field(ctx, "sc_a", 1, ENG_F32, 0.0f);
    eng_field *o = et_field(ctx, "sc_o", 1, ENG_F32, 0.0f);
    for (int i = 0; i < N; i++)
        et_put(ctx, a, i, 0, 0, (float)(i % 5));
    eng_program *p = et_compile(ctx,
        "kernel sc(field<f32, 1> a, field<f32, 1> o) {\n"
        "    for (i in 0 .. 200) {\n"
        "        bool up = i > 0 && a[i - 1] < a[i];\n"
        "        bool edge = i == 0 || a[i - 1] == 0.0;\n"
        "        f32 prev = i > 0 ? a[i - 1] : 100.0;\n"
        "        o[i] = (up ? 1.0 : 0.0) + (edge ? 10.0 : 0.0) + prev;\n"
        "    }\n"
        "}\n");
    eng_arg args[2] = {et_f(a), et_f(o)};
    if (et_run(ctx, p, "sc", args, 2))
        return;
    for (int i = 0; i < N; i++) {
        float ai = (float)(i % 5), prev = i > 0 ? (float)((i - 1) % 5) : 100.0f;
        int up = i > 0 && prev < ai, edge = i == 0 || prev == 0.0f;
        CHECK(et_at(o, i, 0, 0, 0) == (up ? 1.0f : 0.0f) + (edge ? 10.0f : 0.0f) + prev);
    }
}

static void test_box(void)
{
    eng_field *img = et_field(ctx, "img", 2, ENG_F32, -5.0f);
    eng_program *p = et_compile(ctx,
        "kernel box(field<f32, 2> img, i32 n) {\n"
        "    for (P in ivec2(-3, 2) .. ivec2(n, n + 1)) { img[P] = f32(P.x * 1000 + P.y); }\n"
        "}\n");
    eng_arg args[2] = {et_f(img), et_s(37)};
    if (et_run(ctx, p, "box", args, 2))
        return;
    int bad = 0;
    for (int x = -5; x < 40; x++)
        for (int y = 0; y < 40; y++) {
            int in = x >= -3 && x < 37 && y >= 2 && y < 38;
            float got = et_at(img, x, y, 0, 0), want = in ? (float)(x * 1000 + y) : -5.0f;
            if (got != want && bad++ < 5)
                fprintf(stderr, "box (%d, %d): %g, expected %g\n", x, y, got, want);
        }
    CHECK(bad == 0);
}

int main(void)
{
    ctx = et_context(2);
    test_fill();
    test_ints();
    test_float_builtins();
    test_lerp_rounding();
    test_const_like_run();
    test_vectors();
    test_control();
    test_short_circuit();
    test_box();
    eng_destroy(ctx);
    if (check_failures)
        fprintf(stderr, "%d checks failed\n", check_failures);
    return check_failures ? 1 : 0;
}
