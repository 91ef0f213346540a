/* Lowered kernels run on the JIT and are compared with the same computation in plain C:
 * scalar types and integer semantics (floored / and %, shifts, wrapping, u32, i64, f64, bool
 * arguments), vectors and matrices (construct, swizzle, dynamic components read and
 * assigned, matrix products, cross, normalize, determinant), the math builtins, and control
 * flow (short-circuit evaluation counted through a field, ?:, while/break/continue, serial
 * ivec3 box loops with break and continue, early returns from nested loops, static loops,
 * global and local constants, assigned function parameters). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"
#include "run_env.h"

static int near(double got, double want, double rel)
{
    return fabs(got - want) <= rel * (fabs(want) + 1e-3);
}

static float rd_f(run_env *e, const char *f, int i)
{
    uint32_t c[3];
    run_read(e->tree, f, i, 0, 0, c);
    float v;
    memcpy(&v, c, 4);
    return v;
}

static int32_t rd_i(run_env *e, const char *f, int i)
{
    uint32_t c[3];
    run_read(e->tree, f, i, 0, 0, c);
    return (int32_t)c[0];
}

static int32_t fdiv32(int32_t a, int32_t b)
{
    int32_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

static int32_t fmod32(int32_t a, int32_t b)
{
    int32_t r = a % b;
    return (r != 0 && (r < 0) != (b < 0)) ? r + b : r;
}

static int64_t fmod64(int64_t a, int64_t b)
{
    int64_t r = a % b;
    return (r != 0 && (r < 0) != (b < 0)) ? r + b : r;
}

static int32_t isign(int32_t x) { return x > 0 ? 1 : x < 0 ? -1 : 0; }
static float fsign(float x) { return x > 0 ? 1.0f : x < 0 ? -1.0f : 0.0f; }

static const char *ints_src =
    "kernel ints(field<i32, 1> oi, field<i32, 1> oj, field<f32, 1> o1, field<f32, 1> o2,\n"
    "            i32 k, u32 seed, i64 big, f64 dd, bool flag) {\n"
    "    for (i in 0 .. 64) {\n"
    "        i32 x = i - 32;\n"
    "        oi[i] = x / 5 + x % 7 * 3 + (x << 2) - (x >> 1) + (x & 12 | 3 ^ k) + ~x;\n"
    "        u32 h = (seed ^ u32(i)) * 2654435761u;\n"
    "        u32 hh = 0u;\n"
    "        for (j in 1u .. 4u) { hh += h * j; }\n"
    "        oj[i] = i32(h >> 28u) + i32(h % 1000u / 7u) + (flag ? 1 : 0) + i32(hh >> 20u);\n"
    "        i64 w = big * i64(x) + 1l;\n"
    "        for (q in -2l .. 3l) { w += q * q; }\n"
    "        o1[i] = f32(w % 1000l) + f32(abs(x)) * f32(sign(x));\n"
    "        f64 d = f64(x) * dd;\n"
    "        o2[i] = f32(sqrt(abs(d)) + d * d);\n"
    "    }\n"
    "}\n";

static void test_ints(run_env *e)
{
    int32_t k = 5;
    uint32_t seed = 0x12345678u;
    int64_t big = 123456789012LL;
    double dd = 0.1;
    uint64_t dbits;
    memcpy(&dbits, &dd, 8);
    uint64_t args[5] = {(uint64_t)(int64_t)k, seed, (uint64_t)big, dbits, 1};
    const char *f[4] = {"oi", "oj", "o1", "o2"};
    CHECK(run_kernel(e, ints_src, "ints", f, 4, args, 5) == 0);
    int bad = 0;
    for (int i = 0; i < 64; i++) {
        int32_t x = i - 32;
        int32_t shl = (int32_t)((uint32_t)x << 2);
        int32_t oi = fdiv32(x, 5) + fmod32(x, 7) * 3 + shl - (x >> 1) + ((x & 12) | (3 ^ k)) + ~x;
        uint32_t h = (seed ^ (uint32_t)i) * 2654435761u, hh = 0;
        for (uint32_t j = 1; j < 4; j++)
            hh += h * j;
        int32_t oj = (int32_t)(h >> 28) + (int32_t)(h % 1000u / 7u) + 1 + (int32_t)(hh >> 20);
        int64_t w = (int64_t)((uint64_t)big * (uint64_t)(int64_t)x) + 1;
        for (int64_t q = -2; q < 3; q++)
            w += q * q;
        float o1 = (float)fmod64(w, 1000) + (float)abs(x) * (float)isign(x);
        double d = (double)x * dd;
        float o2 = (float)(sqrt(fabs(d)) + d * d);
        if (rd_i(e, "oi", i) != oi || rd_i(e, "oj", i) != oj || !near(rd_f(e, "o1", i), o1, 1e-6) ||
            !near(rd_f(e, "o2", i), o2, 1e-6)) {
            if (bad++ < 3)
                fprintf(stderr, "ints i=%d: oi %d/%d oj %d/%d o1 %g/%g o2 %g/%g\n", i,
                        rd_i(e, "oi", i), oi, rd_i(e, "oj", i), oj, rd_f(e, "o1", i), o1,
                        rd_f(e, "o2", i), o2);
        }
    }
    CHECK(bad == 0);
}

static const char *vecs_src =
    "kernel vecs(field<f32, 1> o1, field<f32, 1> o2, field<f32, 1> o3, field<f32, 1> o4,\n"
    "            vec3 u, mat3 m, ivec2 sh) {\n"
    "    for (i in 0 .. 32) {\n"
    "        f32 t = f32(i) * 0.25;\n"
    "        vec3 v = vec3(t, 1.0 - t, t * t) + u;\n"
    "        vec3 w = cross(v, u) + normalize(v) * length(u);\n"
    "        mat3 r = m * transpose(m) + mat3(t);\n"
    "        vec3 q = r * v;\n"
    "        o1[i] = dot(w, q) + determinant(r);\n"
    "        vec4 v4 = vec4(v.zy, 2.0, t);\n"
    "        vec2 s = v4.wx * 2.0 - vec2(1.0);\n"
    "        o2[i] = s.x * s.y + v4[i % 4] + r[i % 3][(i + 1) % 3];\n"
    "        ivec3 iv = ivec3(i - 16, 16 - i, i * 2) / 3 + ivec3(sh, 1);\n"
    "        o3[i] = f32(dot(iv, ivec3(1, 2, 3))) + f32(-iv.y % 5);\n"
    "        vec3 z = vec3(0.0);\n"
    "        z[i % 3] = t;\n"
    "        z.yx += vec2(1.0, 2.0);\n"
    "        z[0] *= 3.0;\n"
    "        mat3 mm = mat3(1.0);\n"
    "        mm[i % 3] = v;\n"
    "        mm[1][2] = 5.0;\n"
    "        mm[(i + 2) % 3][i % 3] += 0.5;\n"
    "        o4[i] = z.x + 10.0 * z.y + 100.0 * z.z +\n"
    "                dot(mm[0] + mm[1] + mm[2], vec3(1.0, 2.0, 3.0));\n"
    "    }\n"
    "}\n";

/* column-major: element (column c, row r) at c * 3 + r */
static void matmul(const float *a, const float *b, int cols, float *out)
{
    for (int c = 0; c < cols; c++)
        for (int r = 0; r < 3; r++)
            out[c * 3 + r] = a[r] * b[c * 3] + a[3 + r] * b[c * 3 + 1] + a[6 + r] * b[c * 3 + 2];
}

static float det3(const float *m)
{
#define E(c, r) m[(c) * 3 + (r)]
    return E(0, 0) * (E(1, 1) * E(2, 2) - E(2, 1) * E(1, 2)) -
           E(1, 0) * (E(0, 1) * E(2, 2) - E(2, 1) * E(0, 2)) +
           E(2, 0) * (E(0, 1) * E(1, 2) - E(1, 1) * E(0, 2));
#undef E
}

static float dot3(const float *a, const float *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static void test_vecs(run_env *e)
{
    const float u[3] = {0.3f, -1.2f, 2.0f};
    const float m[9] = {1.0f, 0.5f, -0.25f, 0.0f, 2.0f, 0.75f, -1.5f, 0.125f, 1.25f};
    const int32_t sh[2] = {2, -3};
    uint64_t args[14];
    for (int i = 0; i < 3; i++)
        args[i] = run_f32(u[i]);
    for (int i = 0; i < 9; i++)
        args[3 + i] = run_f32(m[i]);
    args[12] = (uint64_t)(int64_t)sh[0];
    args[13] = (uint64_t)(int64_t)sh[1];
    const char *f[4] = {"o1", "o2", "o3", "o4"};
    CHECK(run_kernel(e, vecs_src, "vecs", f, 4, args, 14) == 0);
    int bad = 0;
    for (int i = 0; i < 32; i++) {
        float t = (float)i * 0.25f;
        float v[3] = {t + u[0], (1.0f - t) + u[1], t * t + u[2]};
        float lv = sqrtf(dot3(v, v)), lu = sqrtf(dot3(u, u));
        float w[3];
        for (int a = 0; a < 3; a++) {
            int j = (a + 1) % 3, k = (a + 2) % 3;
            w[a] = (v[j] * u[k] - v[k] * u[j]) + v[a] / lv * lu;
        }
        float mt[9], r[9], q[3];
        for (int c = 0; c < 3; c++)
            for (int rr = 0; rr < 3; rr++)
                mt[c * 3 + rr] = m[rr * 3 + c];
        matmul(m, mt, 3, r);
        for (int a = 0; a < 9; a++)
            r[a] += a % 4 == 0 ? t : 0.0f;
        matmul(r, v, 1, q);
        float o1 = dot3(w, q) + det3(r);
        float v4[4] = {v[2], v[1], 2.0f, t};
        float s[2] = {v4[3] * 2.0f - 1.0f, v4[0] * 2.0f - 1.0f};
        float o2 = s[0] * s[1] + v4[i % 4] + r[(i % 3) * 3 + (i + 1) % 3];
        int32_t iv[3] = {fdiv32(i - 16, 3) + sh[0], fdiv32(16 - i, 3) + sh[1], fdiv32(i * 2, 3) + 1};
        float o3 = (float)(iv[0] * 1 + iv[1] * 2 + iv[2] * 3) + (float)fmod32(-iv[1], 5);
        float z[3] = {0, 0, 0};
        z[i % 3] = t;
        z[1] += 1.0f;
        z[0] += 2.0f;
        z[0] *= 3.0f;
        float mm[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
        for (int a = 0; a < 3; a++)
            mm[(i % 3) * 3 + a] = v[a];
        mm[1 * 3 + 2] = 5.0f;
        mm[((i + 2) % 3) * 3 + i % 3] += 0.5f;
        float sum[3], one23[3] = {1, 2, 3};
        for (int a = 0; a < 3; a++)
            sum[a] = mm[a] + mm[3 + a] + mm[6 + a];
        float o4 = z[0] + 10.0f * z[1] + 100.0f * z[2] + dot3(sum, one23);
        float g1 = rd_f(e, "o1", i), g2 = rd_f(e, "o2", i), g3 = rd_f(e, "o3", i),
              g4 = rd_f(e, "o4", i);
        if (!near(g1, o1, 1e-5) || !near(g2, o2, 1e-5) || g3 != o3 || !near(g4, o4, 1e-5)) {
            if (bad++ < 3)
                fprintf(stderr, "vecs i=%d: o1 %g/%g o2 %g/%g o3 %g/%g o4 %g/%g\n", i, g1, o1,
                        g2, o2, g3, o3, g4, o4);
        }
    }
    CHECK(bad == 0);
}

static const char *math_src =
    "kernel math(field<f32, 1> o1, field<f32, 1> o2, field<i32, 1> oi, field<f32, 1> o3) {\n"
    "    for (i in 0 .. 64) {\n"
    "        f32 x = f32(i) * 0.37 - 11.3;\n"
    "        o1[i] = floor(x) + 2.0 * ceil(x) + 4.0 * fract(x) + 8.0 * round(x) +\n"
    "                16.0 * trunc(x) + sign(x);\n"
    "        o2[i] = pow(abs(x), 1.5) + atan2(x, 2.0) + exp(x * 0.1) + log(abs(x) + 1.0) +\n"
    "                sin(x) + cos(x) + tan(x * 0.1) + min(x, 0.5) + max(x, -0.5) +\n"
    "                clamp(x, -3.0, 3.0) + lerp(x, 1.0, 0.25);\n"
    "        i32 k = i - 30;\n"
    "        oi[i] = min(k, 3) * 1000 + max(k, -5) * 100 + clamp(k, -2, 2) * 10 + abs(k) +\n"
    "                sign(k);\n"
    "        vec2 p = floor(vec2(x, -x)) + abs(vec2(x)) * sign(vec2(-x, x));\n"
    "        f64 y = f64(x);\n"
    "        o3[i] = p.x + 3.0 * p.y + f32(floor(y * 2.0) + sqrt(abs(y)));\n"
    "    }\n"
    "}\n";

static void test_math(run_env *e)
{
    const char *f[4] = {"o1", "o2", "oi", "o3"};
    CHECK(run_kernel(e, math_src, "math", f, 4, NULL, 0) == 0);
    int bad = 0;
    for (int i = 0; i < 64; i++) {
        float x = (float)i * 0.37f - 11.3f;
        float o1 = floorf(x) + 2.0f * ceilf(x) + 4.0f * (x - floorf(x)) + 8.0f * roundf(x) +
                   16.0f * truncf(x) + fsign(x);
        float o2 = powf(fabsf(x), 1.5f) + atan2f(x, 2.0f) + expf(x * 0.1f) +
                   logf(fabsf(x) + 1.0f) + sinf(x) + cosf(x) + tanf(x * 0.1f) + fminf(x, 0.5f) +
                   fmaxf(x, -0.5f) + fminf(fmaxf(x, -3.0f), 3.0f) + (x + (1.0f - x) * 0.25f);
        int32_t k = i - 30;
        int32_t oi = (k < 3 ? k : 3) * 1000 + (k > -5 ? k : -5) * 100 +
                     (k < -2 ? -2 : k > 2 ? 2 : k) * 10 + abs(k) + isign(k);
        float p0 = floorf(x) + fabsf(x) * fsign(-x), p1 = floorf(-x) + fabsf(x) * fsign(x);
        double y = (double)x;
        float o3 = p0 + 3.0f * p1 + (float)(floor(y * 2.0) + sqrt(fabs(y)));
        float g1 = rd_f(e, "o1", i), g2 = rd_f(e, "o2", i), g3 = rd_f(e, "o3", i);
        if (!near(g1, o1, 1e-6) || !near(g2, o2, 1e-4) || rd_i(e, "oi", i) != oi ||
            !near(g3, o3, 1e-6)) {
            if (bad++ < 3)
                fprintf(stderr, "math i=%d x=%g: o1 %g/%g o2 %g/%g oi %d/%d o3 %g/%g\n", i, x,
                        g1, o1, g2, o2, rd_i(e, "oi", i), oi, g3, o3);
        }
    }
    CHECK(bad == 0);
}

static const char *cf_src =
    "const i32 LIMIT = 5;\n"
    "const vec2 OFF = vec2(0.5, 1.5);\n"
    "func bool touch(field<i32, 1> c, i32 k, bool r) {\n"
    "    c[k] += 1;\n"
    "    return r;\n"
    "}\n"
    "func i32 search(i32 n, i32 target) {\n"
    "    i32 steps = 0;\n"
    "    for (a in 0 .. n) {\n"
    "        i32 b = 0;\n"
    "        while (true) {\n"
    "            if (b >= n) break;\n"
    "            steps += 1;\n"
    "            if (a * n + b == target) return steps * 1000 + a * 10 + b;\n"
    "            b += 1;\n"
    "        }\n"
    "    }\n"
    "    return -steps;\n"
    "}\n"
    "func i32 boxscan(i32 lim) {\n"
    "    i32 acc = 0;\n"
    "    for (P in ivec3(0, 0, 0) .. ivec3(3, 4, 5)) {\n"
    "        if (P.x == 1) continue;\n"
    "        acc += P.x + 10 * P.y + 100 * P.z;\n"
    "        if (acc > lim) break;\n"
    "    }\n"
    "    return acc;\n"
    "}\n"
    "func f32 twice(f32 x) { x = x * 2.0; return x; }\n"
    "kernel cf(field<i32, 1> oi, field<i32, 1> oj, field<f32, 1> o1, i32 n) {\n"
    "    for (static q in 0 .. 10) { oj[q] = 0; }\n"
    "    bool a = false && touch(oj, 0, true);\n"
    "    bool b = true || touch(oj, 1, true);\n"
    "    bool d = true && touch(oj, 2, false);\n"
    "    bool e = false || touch(oj, 3, true);\n"
    "    i32 s = a ? 1 : (touch(oj, 4, true) ? 2 : 3);\n"
    "    oj[8] = (a ? 1 : 0) + (b ? 2 : 0) + (d ? 4 : 0) + (e ? 8 : 0) + s * 16;\n"
    "    for (i in 0 .. n) {\n"
    "        oi[i] = search(6, i) + boxscan(i * 37);\n"
    "        const f32 base = f32(i) + OFF.y;\n"
    "        f32 acc = 0.0;\n"
    "        for (static k in 0 .. 4) { acc += base * f32(k) + OFF[k % 2]; }\n"
    "        i32 cnt = 0;\n"
    "        i32 j = 0;\n"
    "        while (j < 100) {\n"
    "            j += 1;\n"
    "            if (j % 3 == 0) continue;\n"
    "            cnt += 1;\n"
    "            if (cnt >= LIMIT + i % 4) break;\n"
    "        }\n"
    "        bool hit = i % 5 == 0 && touch(oj, 9, true);\n"
    "        o1[i] = acc + f32(cnt) * 100.0 + f32(j) * 1000.0 + twice(f32(i)) +\n"
    "                (hit ? 0.25 : 0.0);\n"
    "    }\n"
    "}\n";

static int32_t c_search(int32_t n, int32_t target)
{
    int32_t steps = 0;
    for (int32_t a = 0; a < n; a++)
        for (int32_t b = 0; b < n; b++) {
            steps++;
            if (a * n + b == target)
                return steps * 1000 + a * 10 + b;
        }
    return -steps;
}

static int32_t c_boxscan(int32_t lim)
{
    int32_t acc = 0;
    for (int32_t z = 0; z < 5; z++)
        for (int32_t y = 0; y < 4; y++)
            for (int32_t x = 0; x < 3; x++) {
                if (x == 1)
                    continue;
                acc += x + 10 * y + 100 * z;
                if (acc > lim)
                    return acc;
            }
    return acc;
}

static void test_cf(run_env *e)
{
    const int32_t n = 40;
    uint64_t args[1] = {(uint64_t)n};
    const char *f[3] = {"oi", "oj", "o1"};
    CHECK(run_kernel(e, cf_src, "cf", f, 3, args, 1) == 0);
    /* only the deciding sides ran: touch(2), touch(3), touch(4); a=0 b=1 d=0 e=1 s=2 */
    const int32_t counts[8] = {0, 0, 1, 1, 1, 0, 0, 0};
    for (int q = 0; q < 8; q++)
        CHECK(rd_i(e, "oj", q) == counts[q]);
    CHECK(rd_i(e, "oj", 8) == 2 + 8 + 2 * 16);
    CHECK(rd_i(e, "oj", 9) == 8); /* i % 5 == 0 for i in [0, 40), atomically */
    int bad = 0;
    for (int i = 0; i < n; i++) {
        int32_t oi = c_search(6, i) + c_boxscan(i * 37);
        float base = (float)i + 1.5f, acc = 0.0f;
        for (int k = 0; k < 4; k++)
            acc += base * (float)k + (k % 2 ? 1.5f : 0.5f);
        int32_t cnt = 0, j = 0;
        while (j < 100) {
            j++;
            if (j % 3 == 0)
                continue;
            cnt++;
            if (cnt >= 5 + i % 4)
                break;
        }
        float o1 = acc + (float)cnt * 100.0f + (float)j * 1000.0f + (float)i * 2.0f +
                   (i % 5 == 0 ? 0.25f : 0.0f);
        if (rd_i(e, "oi", i) != oi || !near(rd_f(e, "o1", i), o1, 1e-6)) {
            if (bad++ < 3)
                fprintf(stderr, "cf i=%d: oi %d/%d o1 %g/%g\n", i, rd_i(e, "oi", i), oi,
                        rd_f(e, "o1", i), o1);
        }
    }
    CHECK(bad == 0);
}

int main(void)
{
    run_env e;
    int rc = run_init(&e);
    if (rc == 77)
        return 77;
    CHECK(rc == 0);
    if (rc != 0)
        CHECK_DONE();
    test_ints(&e);
    test_vecs(&e);
    test_math(&e);
    test_cf(&e);
    run_done(&e);
    CHECK_DONE();
}
