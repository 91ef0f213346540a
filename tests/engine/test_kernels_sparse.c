/* Kernels over sparse 3-D fields and 0-D scalars, compared with C loops over the same voxels:
 * struct-for stencils (inactive neighbours read the background), f[I / 2], activation and
 * deactivation, atomics and reductions, values handed from serial code to parallel loops,
 * vec3 fields, voxel_size, and the same sequence of launches eager and queued. */
#include "engine_test.h"

#include <stdint.h>

static eng_context *ctx;

/* A deterministic pattern of active blocks: about a third of the 8^3 blocks of [-32, 32)^3. */
static int block_on(int bx, int by, int bz) { return ((bx * 7 + by * 13 + bz * 5) & 3) == 0; }
static float pattern(int x, int y, int z) { return (float)((x * 31 + y * 17 + z * 7) % 23) * 0.125f - 1.0f; }

/* The pattern written into the active blocks; component c of a vec3 field is the pattern
 * shifted by c (component 0 is the scalar pattern). */
static float vpattern(int x, int y, int z, int c) { return pattern(x + 5 * c, y - 3 * c, z + c); }

static void fill_components(eng_field *f, int k)
{
    float vals[3 * 512];
    for (int bx = -4; bx < 4; bx++)
        for (int by = -4; by < 4; by++)
            for (int bz = -4; bz < 4; bz++) {
                if (!block_on(bx, by, bz))
                    continue;
                int32_t o[3] = {bx * 8, by * 8, bz * 8};
                for (int n = 0; n < 512; n++)
                    for (int c = 0; c < k; c++)
                        vals[k * n + c] = vpattern(o[0] + n / 64, o[1] + (n / 8) % 8, o[2] + n % 8, c);
                CHECK_OK(ctx, eng_field_write_block(ctx, f, o, vals, NULL));
            }
}
static void fill_pattern(eng_field *f) { fill_components(f, 1); }

static int active_at(int x, int y, int z)
{
    if (x < -32 || x >= 32 || y < -32 || y >= 32 || z < -32 || z >= 32)
        return 0;
    int bx = (x + 64) / 8 - 8, by = (y + 64) / 8 - 8, bz = (z + 64) / 8 - 8;
    return block_on(bx, by, bz);
}
static float src_at(int x, int y, int z, float bg) { return active_at(x, y, z) ? pattern(x, y, z) : bg; }

static void test_laplacian(void)
{
    eng_field *src = et_field(ctx, "lap_src", 3, ENG_F32, 0.5f);
    eng_field *dst = et_field(ctx, "lap_dst", 3, ENG_F32, 0.0f);
    fill_pattern(src);
    eng_program *p = et_compile(ctx,
        "kernel smooth(field<f32> src, field<f32> dst, f32 alpha) {\n"
        "    for (I in src) {\n"
        "        f32 s = -6.0 * src[I];\n"
        "        for (static a in 0 .. 3) {\n"
        "            ivec3 e = ivec3(0);\n"
        "            e[a] = 1;\n"
        "            s += src[I + e] + src[I - e];\n"
        "        }\n"
        "        dst[I] = src[I] + alpha * s;\n"
        "    }\n"
        "}\n");
    eng_arg args[3] = {et_f(src), et_f(dst), et_s(0.1)};
    if (et_run(ctx, p, "smooth", args, 3))
        return;
    CHECK(eng_field_active_voxels(dst) == eng_field_active_voxels(src));
    int bad = 0;
    for (int x = -33; x < 33; x++)
        for (int y = -33; y < 33; y++)
            for (int z = -33; z < 33; z++) {
                float want = 0.0f;
                if (active_at(x, y, z)) {
                    float c = src_at(x, y, z, 0.5f);
                    float s = -6.0f * c;
                    s += src_at(x + 1, y, z, 0.5f) + src_at(x - 1, y, z, 0.5f);
                    s += src_at(x, y + 1, z, 0.5f) + src_at(x, y - 1, z, 0.5f);
                    s += src_at(x, y, z + 1, 0.5f) + src_at(x, y, z - 1, 0.5f);
                    want = c + 0.1f * s;
                }
                float got = et_at(dst, x, y, z, 0);
                if (fabsf(got - want) > 1e-5f && bad++ < 5)
                    fprintf(stderr, "laplacian (%d,%d,%d): %g, expected %g\n", x, y, z, got, want);
            }
    CHECK(bad == 0);
}

/* A red-black Gauss-Seidel sweep: z is written at I and read at its six neighbours, which
 * have the other colour, so the result does not depend on the order of the cells. z starts
 * with a few scattered voxels (background 0.25): many blocks of the domain have no z block
 * when the sweep starts and get one from its writes, and neighbours in blocks z never has
 * read the background. The code generator looks z's neighbouring blocks up once per block
 * of the domain here (fast_struct.c). */
#define RB_N 68 /* [-34, 34)^3 */
static float rb_z[RB_N][RB_N][RB_N];
static int rb_seeded(int x, int y, int z) { return ((x * 5 + y * 3 + z + 99) % 37) == 0; }

static void test_red_black(void)
{
    eng_field *dom = et_field(ctx, "rb_dom", 3, ENG_F32, 0.0f);
    eng_field *r = et_field(ctx, "rb_r", 3, ENG_F32, 0.0f);
    eng_field *z = et_field(ctx, "rb_z", 3, ENG_F32, 0.25f);
    fill_pattern(dom);
    fill_pattern(r);
    for (int x = -34; x < 34; x++)
        for (int y = -34; y < 34; y++)
            for (int w = -34; w < 34; w++) {
                float v = 0.25f;
                if (x >= -32 && x < 32 && y >= -32 && y < 32 && w >= -32 && w < 32 &&
                    rb_seeded(x, y, w)) {
                    v = 2.0f * pattern(y, w, x);
                    et_put(ctx, z, x, y, w, v);
                }
                rb_z[x + 34][y + 34][w + 34] = v;
            }
    eng_program *p = et_compile(ctx,
        "kernel rb(field<f32> dom, field<f32> r, field<f32> z, i32 color) {\n"
        "    for (I in dom) {\n"
        "        if (dom[I] > -0.5 && ((I.x + I.y + I.z) & 1) == color) {\n"
        "            f32 s = r[I];\n"
        "            for (static a in 0 .. 3) {\n"
        "                ivec3 e = ivec3(0);\n"
        "                e[a] = 1;\n"
        "                s += z[I + e] + z[I - e];\n"
        "            }\n"
        "            z[I] = s / 6.5;\n"
        "        }\n"
        "    }\n"
        "}\n");
    for (int color = 0; color < 2; color++) {
        eng_arg args[4] = {et_f(dom), et_f(r), et_f(z), et_s(color)};
        if (et_run(ctx, p, "rb", args, 4))
            return;
        for (int x = -32; x < 32; x++)
            for (int y = -32; y < 32; y++)
                for (int w = -32; w < 32; w++) {
                    if (!active_at(x, y, w) || pattern(x, y, w) <= -0.5f ||
                        ((x + y + w) & 1) != color)
                        continue;
                    float s = pattern(x, y, w);
                    s += rb_z[x + 35][y + 34][w + 34] + rb_z[x + 33][y + 34][w + 34];
                    s += rb_z[x + 34][y + 35][w + 34] + rb_z[x + 34][y + 33][w + 34];
                    s += rb_z[x + 34][y + 34][w + 35] + rb_z[x + 34][y + 34][w + 33];
                    rb_z[x + 34][y + 34][w + 34] = s / 6.5f;
                }
    }
    int bad = 0, swept = 0;
    for (int x = -33; x < 33; x++)
        for (int y = -33; y < 33; y++)
            for (int w = -33; w < 33; w++) {
                float want = rb_z[x + 34][y + 34][w + 34], got = et_at(z, x, y, w, 0);
                swept += active_at(x, y, w) && want != 0.25f && !rb_seeded(x, y, w);
                if (fabsf(got - want) > 1e-6f && bad++ < 5)
                    fprintf(stderr, "red-black z(%d,%d,%d): %g, expected %g\n", x, y, w, got, want);
            }
    CHECK(bad == 0);
    CHECK(swept > 10000); /* the sweep wrote most of the domain */
}

/* Reads at indices computed per voxel (the gathers of a backtrace or a trilinear sample), which
 * the code generator serves through a per-call cache of leaf blocks: the index jumps between
 * active blocks, inactive ones and the outside of the pattern, and a second read sits one
 * voxel off in every axis, so the cache both hits and misses, across block edges too. */
static int gather_q(int c, int o) { return ((c + 32) * 3 + o + 32) % 80 - 40; }
#define GATHER_Q                                                                                   \
    "        ivec3 q = ivec3(((I.x + 32) * 3 + I.z + 32) % 80 - 40,\n"                               \
    "                        ((I.y + 32) * 3 + I.x + 32) % 80 - 40,\n"                               \
    "                        ((I.z + 32) * 3 + I.y + 32) % 80 - 40);\n"

static void test_gather(void)
{
    eng_field *src = et_field(ctx, "g_src", 3, ENG_F32, 0.25f);
    eng_field *dst = et_field(ctx, "g_dst", 3, ENG_F32, 0.0f);
    fill_pattern(src);
    eng_program *p = et_compile(ctx,
        "kernel gather(field<f32> src, field<f32> dst) {\n"
        "    for (I in src) {\n"
        GATHER_Q
        "        dst[I] = src[q] + 0.5 * src[q + ivec3(1, -1, 1)];\n"
        "    }\n"
        "}\n");
    eng_arg args[2] = {et_f(src), et_f(dst)};
    if (et_run(ctx, p, "gather", args, 2))
        return;
    int bad = 0, inside = 0, outside = 0;
    for (int x = -32; x < 32; x++)
        for (int y = -32; y < 32; y++)
            for (int z = -32; z < 32; z++) {
                if (!active_at(x, y, z))
                    continue;
                int qx = gather_q(x, z), qy = gather_q(y, x), qz = gather_q(z, y);
                float want = src_at(qx, qy, qz, 0.25f) + 0.5f * src_at(qx + 1, qy - 1, qz + 1, 0.25f);
                inside += active_at(qx, qy, qz);
                outside += !active_at(qx, qy, qz);
                float got = et_at(dst, x, y, z, 0);
                if (fabsf(got - want) > 1e-6f && bad++ < 5)
                    fprintf(stderr, "gather (%d,%d,%d): %g, expected %g\n", x, y, z, got, want);
            }
    CHECK(bad == 0);
    CHECK(inside > 1000 && outside > 1000); /* both kinds of read were exercised */
}

/* A read at a computed voxel after the task wrote (and activated) that voxel of the same field
 * sees the written value, not the background the first read found there. The write goes
 * through another index expression (w = p + k, k = 0 at run time), so neither the IR (CSE of
 * the read's pointer) nor the code generator (the read's looked-up block, cached_read.c) may
 * reuse what was looked up before the write. p is a transposition of I, so no two iterations
 * touch one voxel of f (the neighbour reads race, and count for nothing). */
static void test_read_after_write(void)
{
    eng_field *src = et_field(ctx, "raw_src", 3, ENG_F32, 0.25f);
    eng_field *f = et_field(ctx, "raw_f", 3, ENG_F32, 0.5f);
    eng_field *dst = et_field(ctx, "raw_dst", 3, ENG_F32, 0.0f);
    fill_pattern(src);
    eng_program *p = et_compile(ctx,
        "kernel raw(field<f32> src, field<f32> f, field<f32> dst, i32 k) {\n"
        "    for (I in src) {\n"
        "        ivec3 p = ivec3(I.y, I.x, I.z);\n"
        "        ivec3 w = ivec3(I.y + k, I.x, I.z);\n"
        "        f32 a = f[p] + 0.0 * f[p + ivec3(1, 0, 0)];\n"
        "        f[w] = a + src[I];\n"
        "        dst[I] = f[p] + 0.0 * f[p + ivec3(1, 0, 0)];\n"
        "    }\n"
        "}\n");
    eng_arg args[4] = {et_f(src), et_f(f), et_f(dst), et_s(0)};
    if (et_run(ctx, p, "raw", args, 4))
        return;
    int bad = 0, fresh = 0;
    for (int x = -32; x < 32; x++)
        for (int y = -32; y < 32; y++)
            for (int z = -32; z < 32; z++) {
                if (!active_at(x, y, z))
                    continue;
                fresh += !active_at(y, x, z);
                float want = 0.5f + pattern(x, y, z);
                float got = et_at(dst, x, y, z, 0);
                if (fabsf(got - want) > 1e-6f && bad++ < 5)
                    fprintf(stderr, "read after write (%d,%d,%d): %g, expected %g\n", x, y, z,
                            got, want);
            }
    CHECK(bad == 0);
    CHECK(fresh > 1000); /* many writes went to blocks f did not have */
}

/* A trilinear sample of a vec3 field at the computed points of test_gather, shifted by a
 * fraction: its 24 reads (8 corners, 3 components) take the base corner's cached leaf block,
 * looked up once for all of them (engine/codegen/cached_read.c), unless a corner crosses into
 * the next block; components, corners and the background must come out as in a C loop. */
static float vsrc_bg[3] = {0.5f, 1.5f, 2.5f};
static float vsrc_at(int x, int y, int z, int c) { return active_at(x, y, z) ? vpattern(x, y, z, c) : vsrc_bg[c]; }

static void test_gather_vec3(void)
{
    eng_field *src = et_field(ctx, "gv_src", 3, ENG_VEC3, 0.0f);
    eng_field *dst = et_field(ctx, "gv_dst", 3, ENG_F32, 0.0f);
    float bg[3] = {0.5f, 1.5f, 2.5f};
    eng_field_set_background(src, bg);
    fill_components(src, 3);
    eng_program *p = et_compile(ctx,
        "kernel gather3(field<vec3> src, field<f32> dst) {\n"
        "    for (I in src) {\n"
        GATHER_Q
        "        vec3 v = sample(src, vec3(q) + vec3(0.25, 0.5, 0.75));\n"
        "        dst[I] = v.x + 2.0 * v.y + 4.0 * v.z;\n"
        "    }\n"
        "}\n");
    eng_arg args[2] = {et_f(src), et_f(dst)};
    /* twice: the second time with another background, which the compiled task must read
     * (inactive blocks read the leaf's background block, refilled on the change) */
    for (int round = 0; round < 2; round++) {
        if (round == 1) {
            float bg2[3] = {-3.0f, 7.0f, 0.25f};
            eng_field_set_background(src, bg2);
            memcpy(vsrc_bg, bg2, sizeof bg2);
        }
        if (et_run(ctx, p, "gather3", args, 2))
            return;
        int bad = 0, n = 0;
        const float w[3] = {0.25f, 0.5f, 0.75f};
        for (int x = -32; x < 32; x++)
            for (int y = -32; y < 32; y++)
                for (int z = -32; z < 32; z++) {
                    if (!active_at(x, y, z))
                        continue;
                    int q[3] = {gather_q(x, z), gather_q(y, x), gather_q(z, y)};
                    float want = 0;
                    for (int c = 0; c < 3; c++) {
                        float s = 0;
                        for (int i = 0; i < 2; i++)
                            for (int j = 0; j < 2; j++)
                                for (int k = 0; k < 2; k++)
                                    s += (i ? w[0] : 1 - w[0]) * (j ? w[1] : 1 - w[1]) *
                                         (k ? w[2] : 1 - w[2]) *
                                         vsrc_at(q[0] + i, q[1] + j, q[2] + k, c);
                        want += (float)(1 << c) * s;
                    }
                    float got = et_at(dst, x, y, z, 0);
                    n++;
                    if (fabsf(got - want) > 1e-4f && bad++ < 5)
                        fprintf(stderr, "gather3 round %d (%d,%d,%d): %g, expected %g\n", round, x,
                                y, z, got, want);
                }
        CHECK(bad == 0);
        CHECK(n > 10000);
    }
    float bg0[3] = {0.5f, 1.5f, 2.5f};
    memcpy(vsrc_bg, bg0, sizeof bg0); /* test_vec3_stencil's field uses the first one */
}

/* Trilinear samples near each voxel, at points that vary per voxel (a backtrace): the code
 * generator takes each corner's block from a table of the blocks around the list entry
 * (engine/codegen/cached_read.c). The displacements reach up to 3 voxels, so corners fall in
 * all 27 neighbours, active or not; some voxels jump 11 voxels (past the table: the cached
 * way), and two blocks at the ends of the index range sample beyond it (the background). */
static float near_d(int x, int y, int z, int c)
{
    if (((x * 3 + y * 5 + z * 7 + 1000) % 29) == 0)
        return c == 1 ? -11.25f : 11.5f;
    return (float)(((x * 13 + y * 7 + z * 3 + c * 11 + 1000) % 25) - 12) * 0.25f + 0.125f;
}
#define NEAR_EDGE 2040 /* blocks [2040, 2048) and [-2048, -2040) along x: the index range's ends */
static float near_src(int x, int y, int z)
{
    if ((x >= NEAR_EDGE && x < NEAR_EDGE + 8) || (x >= -2048 && x < -2040))
        return (y >= 0 && y < 8 && z >= 0 && z < 8) ? pattern(x, y, z) : 0.25f;
    return src_at(x, y, z, 0.25f);
}

static void near_fill(eng_field *f, int vec, int x0)
{
    float vals[3 * 512];
    for (int n = 0; n < 512; n++) {
        int x = x0 + n / 64, y = (n / 8) % 8, z = n % 8;
        for (int c = 0; c < (vec ? 3 : 1); c++)
            vals[(vec ? 3 : 1) * n + c] = vec ? near_d(x, y, z, c) + (x0 > 0 ? 6.0f : x0 < 0 ? -6.0f : 0.0f) * (c == 0)
                                              : pattern(x, y, z);
    }
    int32_t o[3] = {x0, 0, 0};
    CHECK_OK(ctx, eng_field_write_block(ctx, f, o, vals, NULL));
}

static void test_near_sample(void)
{
    eng_field *src = et_field(ctx, "ns_src", 3, ENG_F32, 0.25f);
    eng_field *d = et_field(ctx, "ns_d", 3, ENG_VEC3, 0.0f);
    eng_field *dst = et_field(ctx, "ns_dst", 3, ENG_F32, 0.0f);
    fill_pattern(src);
    near_fill(src, 0, NEAR_EDGE);
    near_fill(src, 0, -2048);
    float vals[3 * 512];
    for (int bx = -4; bx < 4; bx++)
        for (int by = -4; by < 4; by++)
            for (int bz = -4; bz < 4; bz++) {
                if (!block_on(bx, by, bz) && ((bx + by + bz) & 1))
                    continue; /* d covers src's blocks and some src lacks */
                int32_t o[3] = {bx * 8, by * 8, bz * 8};
                for (int n = 0; n < 512; n++)
                    for (int c = 0; c < 3; c++)
                        vals[3 * n + c] = near_d(o[0] + n / 64, o[1] + (n / 8) % 8, o[2] + n % 8, c);
                CHECK_OK(ctx, eng_field_write_block(ctx, d, o, vals, NULL));
            }
    near_fill(d, 1, NEAR_EDGE); /* x displacements pushed 6 voxels outwards */
    near_fill(d, 1, -2048);
    eng_program *p = et_compile(ctx,
        "kernel near(field<f32> src, field<vec3> d, field<f32> dst) {\n"
        "    for (I in d) {\n"
        "        dst[I] = sample(src, vec3(I) + d[I]);\n"
        "    }\n"
        "}\n");
    eng_arg args[3] = {et_f(src), et_f(d), et_f(dst)};
    if (et_run(ctx, p, "near", args, 3))
        return;
    int bad = 0, n = 0, far = 0, crossing = 0, outside = 0;
    for (int x = -2048; x < 2048; x++) {
        if (x == -2040)
            x = -32;
        if (x == 32)
            x = NEAR_EDGE;
        for (int y = -32; y < 32; y++)
            for (int z = -32; z < 32; z++) {
                int edge = x >= NEAR_EDGE || x < -32;
                if (edge ? (y < 0 || y >= 8 || z < 0 || z >= 8)
                         : !(active_at(x, y, z) || !(((x + 64) / 8 + (y + 64) / 8 + (z + 64) / 8) & 1)))
                    continue;
                float v[3], w[3];
                int b[3], in[3] = {x, y, z};
                for (int c = 0; c < 3; c++) {
                    float dc = near_d(x, y, z, c) + (edge && c == 0 ? (x > 0 ? 6.0f : -6.0f) : 0.0f);
                    v[c] = (float)in[c] + dc;
                    float fl = floorf(v[c]);
                    b[c] = (int)fl;
                    w[c] = v[c] - fl;
                }
                far += fabsf(near_d(x, y, z, 0)) > 10.0f;
                crossing += (b[0] >> 3) != (x >> 3) || (b[1] >> 3) != (y >> 3) || (b[2] >> 3) != (z >> 3);
                outside += b[0] + 1 >= 2048 || b[0] < -2048;
                float want = 0;
                for (int i = 0; i < 2; i++)
                    for (int j = 0; j < 2; j++)
                        for (int k = 0; k < 2; k++) {
                            int cx = b[0] + i;
                            float sv = (cx >= 2048 || cx < -2048) ? 0.25f : near_src(cx, b[1] + j, b[2] + k);
                            want += (i ? w[0] : 1 - w[0]) * (j ? w[1] : 1 - w[1]) * (k ? w[2] : 1 - w[2]) * sv;
                        }
                float got = et_at(dst, x, y, z, 0);
                n++;
                if (fabsf(got - want) > 1e-4f && bad++ < 5)
                    fprintf(stderr, "near sample (%d,%d,%d): %g, expected %g\n", x, y, z, got, want);
            }
    }
    CHECK(bad == 0);
    CHECK(n > 100000 && far > 1000 && crossing > 50000 && outside > 50);
}

/* A sample of a field the same launch writes through another parameter bound to it: a block
 * that was inactive when a list entry started may be activated by a write of that entry's
 * own cell, which its sample must then see (7 here, not the background). */
static void test_near_sample_written(void)
{
    eng_field *a = et_field(ctx, "nw_a", 3, ENG_F32, 0.25f);
    eng_field *d = et_field(ctx, "nw_d", 3, ENG_VEC3, 0.0f);
    eng_field *dst = et_field(ctx, "nw_dst", 3, ENG_F32, 0.0f);
    fill_components(d, 3);
    eng_program *p = et_compile(ctx,
        "kernel own(field<f32> a, field<f32> b, field<vec3> d, field<f32> dst) {\n"
        "    for (I in d) {\n"
        "        a[I] = 7.0;\n"
        "        dst[I] = sample(b, vec3(I) + vec3(0.0, 0.0, 0.0) * d[I]);\n"
        "    }\n"
        "}\n");
    eng_arg args[4] = {et_f(a), et_f(a), et_f(d), et_f(dst)};
    if (et_run(ctx, p, "own", args, 4))
        return;
    int bad = 0, n = 0;
    for (int x = -32; x < 32; x++)
        for (int y = -32; y < 32; y++)
            for (int z = -32; z < 32; z++) {
                if (!active_at(x, y, z))
                    continue;
                float got = et_at(dst, x, y, z, 0);
                n++;
                if (got != 7.0f && bad++ < 5)
                    fprintf(stderr, "sample after a write (%d,%d,%d): %g, expected 7\n", x, y, z, got);
            }
    CHECK(bad == 0);
    CHECK(n > 10000);
}

/* Code is specialised to the geometry of the trees it was compiled for (engine/ir/ir.h,
 * ir_geom): the same kernel launched on fields whose layouts differ only in their index offset
 * must compile again, not reuse code that folded the other offset in. */
static void test_geometry(void)
{
    static const char *const layouts[2] = {
        "", "offset(-1024).pointer(ijk,32).pointer(ijk,16).dense(ijk,8)"};
    eng_program *p = et_compile(ctx,
        "kernel shifted(field<f32> src, field<f32> dst) {\n"
        "    for (I in src) {\n"
        "        dst[I] = src[I + ivec3(9, -3, 1)] + sample(src, vec3(I) + vec3(0.5, -7.25, 0.0));\n"
        "    }\n"
        "}\n");
    for (int l = 0; l < 2; l++) {
        char sn[32], dn[32];
        snprintf(sn, sizeof sn, "geo_src%d", l);
        snprintf(dn, sizeof dn, "geo_dst%d", l);
        eng_field *src = et_field_layout(ctx, sn, layouts[l], ENG_F32, 0.25f);
        eng_field *dst = et_field_layout(ctx, dn, layouts[l], ENG_F32, 0);
        fill_pattern(src);
        eng_arg args[2] = {et_f(src), et_f(dst)};
        if (et_run(ctx, p, "shifted", args, 2))
            return;
        int bad = 0, n = 0;
        for (int x = -32; x < 32; x++)
            for (int y = -32; y < 32; y++)
                for (int z = -32; z < 32; z++) {
                    if (!active_at(x, y, z))
                        continue;
                    /* the sample at (x + 0.5, y - 7.25, z): weights 1/2 on x, 1/4 on y - 8 and 3/4 on y - 7 */
                    float s = 0;
                    for (int i = 0; i < 2; i++)
                        for (int j = 0; j < 2; j++)
                            s += 0.5f * (j ? 0.75f : 0.25f) * src_at(x + i, y - 8 + j, z, 0.25f);
                    float want = src_at(x + 9, y - 3, z + 1, 0.25f) + s;
                    float got = et_at(dst, x, y, z, 0);
                    n++;
                    if (fabsf(got - want) > 1e-5f && bad++ < 5)
                        fprintf(stderr, "geometry, layout %d (%d,%d,%d): %g, expected %g\n", l, x,
                                y, z, got, want);
                }
        CHECK(bad == 0);
        CHECK(n > 10000);
    }
}

/* Downsampling by f[I / 2] (floored on negative indices) with atomic adds. */
static void test_downsample(void)
{
    eng_field *fine = et_field(ctx, "ds_fine", 3, ENG_F32, 0.0f);
    eng_field *coarse = et_field(ctx, "ds_coarse", 3, ENG_F32, 0.0f);
    fill_pattern(fine);
    eng_program *p = et_compile(ctx,
        "kernel down(field<f32> fine, field<f32> coarse) {\n"
        "    for (I in fine) { coarse[I / 2] += fine[I] * 0.125; }\n"
        "}\n");
    eng_arg args[2] = {et_f(fine), et_f(coarse)};
    if (et_run(ctx, p, "down", args, 2))
        return;
    int bad = 0;
    for (int x = -16; x < 16; x++)
        for (int y = -16; y < 16; y++)
            for (int z = -16; z < 16; z++) {
                double want = 0;
                int any = 0;
                for (int d = 0; d < 8; d++) {
                    int fx = 2 * x + (d >> 2), fy = 2 * y + ((d >> 1) & 1), fz = 2 * z + (d & 1);
                    if (active_at(fx, fy, fz)) {
                        want += pattern(fx, fy, fz) * 0.125;
                        any = 1;
                    }
                }
                float got = et_at(coarse, x, y, z, 0);
                if ((any && fabs(got - want) > 1e-5) || (!any && got != 0.0f)) {
                    if (bad++ < 5)
                        fprintf(stderr, "downsample (%d,%d,%d): %g, expected %g\n", x, y, z, got, want);
                }
            }
    CHECK(bad == 0);
}

/* Writes and activate() make blocks active; deactivate() and is_active() see them. */
static void test_activation(void)
{
    eng_field *d = et_field(ctx, "act_d", 3, ENG_F32, 0.0f);
    eng_field *m = et_field(ctx, "act_m", 3, ENG_F32, 3.0f);
    et_put(ctx, d, 0, 0, 0, 1.0f);
    et_put(ctx, d, 40, 8, -9, 1.0f);
    eng_program *p = et_compile(ctx,
        "kernel grow(field<f32> d, field<f32> m) {\n"
        "    for (I in d) {\n"
        "        if (d[I] > 0.5) { activate(m, I + ivec3(16, 0, 0)); }\n"
        "    }\n"
        "}\n"
        "kernel mark(field<f32> m, field<f32> d) {\n"
        "    for (I in m) {\n"
        "        d[I] = is_active(m, I + ivec3(1, 0, 0)) ? 2.0 : 4.0;\n"
        "    }\n"
        "}\n"
        "kernel prune(field<f32> m) {\n"
        "    for (I in m) { if (I.x >= 50) { deactivate(m, I); } }\n"
        "}\n");
    eng_arg gm[2] = {et_f(d), et_f(m)};
    if (et_run(ctx, p, "grow", gm, 2))
        return;
    /* d has two active blocks (default layout: 8^3 dense leaves): m gets the two blocks 16
     * voxels along x, every voxel of them active, reading the background. */
    CHECK(eng_field_block_count(m) == 2);
    CHECK(eng_field_active_voxels(m) == 1024);
    CHECK(et_at(m, 16, 0, 0, 0) == 3.0f);
    CHECK(et_at(m, 56, 8, -9, 0) == 3.0f);
    eng_arg md[2] = {et_f(m), et_f(d)};
    if (et_run(ctx, p, "mark", md, 2))
        return;
    /* inside a block of m the neighbour along +x is active, except on the block's last row */
    CHECK(et_at(d, 16, 0, 0, 0) == 2.0f);
    CHECK(et_at(d, 23, 0, 0, 0) == 4.0f);
    CHECK(et_at(d, 0, 0, 0, 0) == 1.0f); /* d's own voxels outside m's blocks are untouched */
    eng_arg pm[1] = {et_f(m)};
    if (et_run(ctx, p, "prune", pm, 1))
        return;
    CHECK(eng_field_active_voxels(m) == 512);
    CHECK(et_at(m, 16, 0, 0, 0) == 3.0f);
}

/* Atomics into a histogram, reductions into 0-D fields, and serial code between loops whose
 * values the next loop uses. */
static void test_reductions(void)
{
    eng_field *a = et_field(ctx, "red_a", 1, ENG_F32, 0.0f);
    eng_field *h = et_field(ctx, "red_h", 1, ENG_F32, 0.0f);
    eng_field *sum = et_field(ctx, "red_sum", 0, ENG_F32, 0.0f);
    eng_field *lo = et_field(ctx, "red_lo", 0, ENG_F32, 0.0f);
    eng_field *hi = et_field(ctx, "red_hi", 0, ENG_F32, 0.0f);
    eng_program *p = et_compile(ctx,
        "kernel red(field<f32, 1> a, field<f32, 1> h, field<f32, 0> sum, field<f32, 0> lo,\n"
        "           field<f32, 0> hi, i32 n) {\n"
        "    sum[] = 0.0;\n"
        "    lo[] = 1e30;\n"
        "    hi[] = -1e30;\n"
        "    for (i in 0 .. n) {\n"
        "        a[i] = f32(i % 17);\n"
        "        h[i % 10] += 1.0;\n"
        "        sum[] += f32(i % 17);\n"
        "        lo[] min= f32((i * 7) % 101) - 3.0;\n"
        "        hi[] max= f32((i * 7) % 101);\n"
        "    }\n"
        "    f32 inv = 1.0 / sum[];\n"
        "    i32 shift = n / 2;\n"
        "    for (i in 0 .. n) { a[i] = a[i] * inv + f32(shift); }\n"
        "}\n");
    eng_arg args[6] = {et_f(a), et_f(h), et_f(sum), et_f(lo), et_f(hi), et_s(1000)};
    if (et_run(ctx, p, "red", args, 6))
        return;
    double s = 0;
    float mn = 1e30f, mx = -1e30f;
    for (int i = 0; i < 1000; i++) {
        s += i % 17;
        mn = fminf(mn, (float)((i * 7) % 101) - 3.0f);
        mx = fmaxf(mx, (float)((i * 7) % 101));
    }
    int32_t z[3] = {0, 0, 0};
    /* integer-valued partial sums below 2^24 are exact in any order */
    CHECK(eng_field_read(sum, z, 0) == (float)s);
    CHECK(eng_field_read(lo, z, 0) == mn);
    CHECK(eng_field_read(hi, z, 0) == mx);
    for (int k = 0; k < 10; k++)
        CHECK(et_at(h, k, 0, 0, 0) == 100.0f);
    float inv = 1.0f / (float)s;
    for (int i = 0; i < 1000; i += 37)
        CHECK(et_at(a, i, 0, 0, 0) == (float)(i % 17) * inv + 500.0f);
}

/* The same reductions from a struct_for over many blocks on 2 threads (each chunk of the loop
 * accumulates and then meets the shared element once), with `-=`, and an integer-valued
 * product so any order of the terms gives the exact sum. */
static void test_struct_reductions(void)
{
    eng_field *a = et_field(ctx, "sred_a", 3, ENG_F32, 0.0f);
    eng_field *sum = et_field(ctx, "sred_sum", 0, ENG_F32, 0.0f);
    eng_field *neg = et_field(ctx, "sred_neg", 0, ENG_F32, 0.0f);
    eng_field *hi = et_field(ctx, "sred_hi", 0, ENG_F32, 0.0f);
    eng_field *vs = et_field(ctx, "sred_vec", 0, ENG_VEC3, 0.0f);
    double want = 0, want_hi = -1e30;
    int n = 0;
    for (int bx = 0; bx < 4; bx++)
        for (int by = 0; by < 3; by++)
            for (int bz = 0; bz < 3; bz++) {
                int x = bx * 8 - 8, y = by * 8, z = bz * 8 + 16;
                float v = (float)((n * 13) % 29) - 7.0f;
                et_put(ctx, a, x + (n % 8), y + 3, z + 5, v);
                want += (double)v * 3.0;
                want_hi = want_hi > v ? want_hi : v;
                n++;
            }
    eng_program *p = et_compile(ctx,
        "kernel sred(field<f32> a, field<f32, 0> sum, field<f32, 0> neg, field<f32, 0> hi,\n"
        "            field<vec3, 0> vs) {\n"
        "    sum[] = 0.0;\n"
        "    neg[] = 100.0;\n"
        "    hi[] = -1e30;\n"
        "    vs[] = vec3(0.0);\n"
        "    for (I in a) {\n"
        "        sum[] += a[I] * 3.0;\n"
        "        neg[] -= 1.0;\n"
        "        hi[] max= a[I];\n"
        "        vs[] += vec3(1.0, 2.0, a[I]);\n"
        "    }\n"
        "}\n");
    eng_arg args[5] = {et_f(a), et_f(sum), et_f(neg), et_f(hi), et_f(vs)};
    if (et_run(ctx, p, "sred", args, 5))
        return;
    int32_t z[3] = {0, 0, 0};
    /* every voxel of the 36 active blocks is visited: background 0 counts in max and neg */
    CHECK(eng_field_read(sum, z, 0) == (float)want);
    CHECK(eng_field_read(neg, z, 0) == 100.0f - 36.0f * 512.0f);
    CHECK(eng_field_read(hi, z, 0) == (float)(want_hi > 0 ? want_hi : 0.0));
    /* the components of one vector element are separate sums */
    CHECK(eng_field_read(vs, z, 0) == 36.0f * 512.0f);
    CHECK(eng_field_read(vs, z, 1) == 2.0f * 36.0f * 512.0f);
    CHECK(eng_field_read(vs, z, 2) == (float)(want / 3.0));
}

static void test_vec3_field(void)
{
    eng_field *v = et_field(ctx, "v3", 3, ENG_VEC3, 0.0f);
    eng_field *s = et_field(ctx, "v3_len", 3, ENG_F32, 0.0f);
    float vals[3 * 512];
    int32_t o[3] = {8, -16, 0};
    for (int n = 0; n < 512; n++)
        for (int c = 0; c < 3; c++)
            vals[3 * n + c] = (float)(n % 9) - (float)c;
    CHECK_OK(ctx, eng_field_write_block(ctx, v, o, vals, NULL));
    eng_program *p = et_compile(ctx,
        "kernel vk(field<vec3> v, field<f32> s, vec3 add) {\n"
        "    for (I in v) {\n"
        "        v[I] = v[I] * 2.0 + add;\n"
        "        v[I].y += voxel_size(v);\n"
        "        s[I] = length(v[I]);\n"
        "    }\n"
        "}\n");
    eng_arg args[3] = {et_f(v), et_f(s), et_s(0)};
    args[2].f[0] = 1.0;
    args[2].f[1] = 2.0;
    args[2].f[2] = 3.0;
    if (et_run(ctx, p, "vk", args, 3))
        return;
    for (int n = 0; n < 512; n += 7) {
        int x = 8 + n / 64, y = -16 + (n / 8) % 8, z = n % 8;
        float w[3];
        for (int c = 0; c < 3; c++)
            w[c] = ((float)(n % 9) - (float)c) * 2.0f + (float)(c + 1);
        w[1] += 0.5f; /* et_field's voxel size */
        for (int c = 0; c < 3; c++)
            CHECK_NEAR(et_at(v, x, y, z, c), w[c], 1e-6);
        CHECK_NEAR(et_at(s, x, y, z, 0), sqrtf(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]), 1e-5);
    }
}

/* A stencil over a vec3 field into another: neighbours in the next block or an inactive one
 * (the background per component), components mixed, a fresh field written. The fast copy of
 * the struct_for (fast_struct.c) serves fields of 12-byte elements too. */
static void test_vec3_stencil(void)
{
    eng_field *v = et_field(ctx, "vs_v", 3, ENG_VEC3, 0.0f);
    eng_field *w = et_field(ctx, "vs_w", 3, ENG_VEC3, 0.0f);
    float bg[3] = {0.5f, 1.5f, 2.5f};
    eng_field_set_background(v, bg);
    fill_components(v, 3);
    eng_program *p = et_compile(ctx,
        "kernel vs(field<vec3> v, field<vec3> w) {\n"
        "    for (I in v) {\n"
        "        vec3 a = v[I + ivec3(1, 0, 0)];\n"
        "        vec3 b = v[I - ivec3(0, 1, 0)];\n"
        "        w[I] = vec3(a.y + b.z, a.z - v[I].x, 2.0 * b.x + v[I + ivec3(0, 0, 1)].y);\n"
        "    }\n"
        "}\n");
    eng_arg args[2] = {et_f(v), et_f(w)};
    if (et_run(ctx, p, "vs", args, 2))
        return;
    int bad = 0, n = 0;
    for (int x = -32; x < 32; x++)
        for (int y = -32; y < 32; y++)
            for (int z = -32; z < 32; z++) {
                if (!active_at(x, y, z))
                    continue;
                float want[3] = {
                    vsrc_at(x + 1, y, z, 1) + vsrc_at(x, y - 1, z, 2),
                    vsrc_at(x + 1, y, z, 2) - vsrc_at(x, y, z, 0),
                    2.0f * vsrc_at(x, y - 1, z, 0) + vsrc_at(x, y, z + 1, 1)};
                n++;
                for (int c = 0; c < 3; c++) {
                    float got = et_at(w, x, y, z, c);
                    if (fabsf(got - want[c]) > 1e-6f && bad++ < 5)
                        fprintf(stderr, "vec3 stencil (%d,%d,%d).%d: %g, expected %g\n", x, y, z, c, got, want[c]);
                }
            }
    CHECK(bad == 0);
    CHECK(n > 10000);
    CHECK(eng_field_active_voxels(w) == eng_field_active_voxels(v));
}

/* Three launches in a row, queued (and optimized) and eager: the same bits. */
static const char *chain_src =
    "kernel scale(field<f32> q, f32 k) { for (I in q) { q[I] = q[I] * k; } }\n"
    "kernel bump(field<f32> q, field<f32> r) { for (I in q) { r[I] = q[I + ivec3(1, 0, 0)] + 1.0; } }\n";

/* A 2-thread context in eager or queued mode, made the current one (ctx) for the helpers;
 * the caller restores the previous ctx and destroys it. */
static eng_context *mode_context(int eager)
{
    eng_context *c = et_context(2);
    eng_mode m = {eager, 0, 0, 0};
    CHECK_OK(c, eng_set_mode(c, &m));
    ctx = c;
    return c;
}

static void run_chain(int eager, float *out, uint64_t *launched)
{
    eng_context *saved = ctx;
    eng_context *c = mode_context(eager);
    eng_field *q = et_field(c, "q", 3, ENG_F32, 0.0f);
    eng_field *r = et_field(c, "r", 3, ENG_F32, 0.0f);
    fill_pattern(q);
    eng_program *p = et_compile(c, chain_src);
    eng_kernel *ks = p ? eng_program_find(p, "scale") : NULL;
    eng_kernel *kb = p ? eng_program_find(p, "bump") : NULL;
    if (ks && kb) {
        eng_arg a1[2] = {et_f(q), et_s(2.0)};
        eng_arg a2[2] = {et_f(q), et_f(r)};
        CHECK_OK(c, eng_launch(c, ks, a1, 2));
        CHECK_OK(c, eng_launch(c, ks, a1, 2));
        CHECK_OK(c, eng_launch(c, kb, a2, 2));
        CHECK_OK(c, eng_sync(c));
    }
    int k = 0;
    for (int x = -32; x < 32; x += 3)
        for (int y = -32; y < 32; y += 5)
            for (int z = -32; z < 32; z++)
                out[k++] = et_at(r, x, y, z, 0);
    eng_stats st;
    eng_get_stats(c, &st);
    *launched = st.tasks_launched;
    ctx = saved;
    eng_destroy(c);
}

static void test_modes(void)
{
    enum { NV = 22 * 13 * 64 };
    static float eager[NV], queued[NV];
    uint64_t ne = 0, nq = 0;
    run_chain(1, eager, &ne);
    run_chain(0, queued, &nq);
    CHECK(!memcmp(eager, queued, sizeof eager));
    /* spot check against C: r = 4 q(x+1) + 1 on r's active voxels */
    CHECK(eager[0] == (active_at(-32, -32, -32) ? 4.0f * src_at(-31, -32, -32, 0.0f) + 1.0f : 0.0f));
    CHECK(ne > 0 && nq > 0);
    CHECK(nq <= ne);
}

/* AsyncTaichi's stencil_reduction shape: b = stencil of q, total += b, b = 0, each a struct_for
 * over q, twice. Queued, the six tasks fuse into one: b's first task activates b's cells and
 * the next only looks b up (masks marked lookup), so which of another iteration's activations
 * came first cannot change a value. Sums of small integers are exact in any order. */
static const char *sr_src =
    "kernel stencil(field<f32> q, field<f32> b) {\n"
    "    for (I in q) { b[I] = q[I - ivec3(1, 0, 0)] + q[I] + q[I + ivec3(1, 0, 0)]; }\n"
    "}\n"
    "kernel reduce(field<f32> q, field<f32> b, field<f32, 0> total) {\n"
    "    for (I in q) { total[] += b[I]; }\n"
    "}\n"
    "kernel clear_b(field<f32> q, field<f32> b) { for (I in q) { b[I] = 0.0; } }\n";

/* q's value at (x, y, z), or -1 where q is inactive */
static float sr_q(int x, int y, int z)
{
    if (y < 0 || y >= 8 || z < 0 || z >= 8)
        return -1.0f;
    for (int bx = -2; bx < 2; bx++)
        if (x >= bx * 16 && x < bx * 16 + 8)
            return (float)((((x - bx * 16) * 64) + y * 8 + z) % 5);
    return -1.0f;
}

static void run_sr(int eager, float *total, float *b_sum, uint64_t *fused)
{
    eng_context *saved = ctx;
    eng_context *c = mode_context(eager);
    eng_field *q = et_field(c, "q", 3, ENG_F32, 0.0f);
    eng_field *b = et_field(c, "b", 3, ENG_F32, 0.0f);
    eng_field *t = et_field(c, "total", 0, ENG_F32, 0.0f);
    float vals[512];
    for (int n = 0; n < 512; n++)
        vals[n] = (float)(n % 5);
    for (int bx = -2; bx < 2; bx++) {
        int32_t o[3] = {bx * 16, 0, 0};
        CHECK_OK(c, eng_field_write_block(c, q, o, vals, NULL));
    }
    eng_program *p = et_compile(c, sr_src);
    const char *names[3] = {"stencil", "reduce", "clear_b"};
    for (int round = 0; round < 2 && p; round++)
        for (int k = 0; k < 3; k++) {
            eng_arg a[3] = {et_f(q), et_f(b), et_f(t)};
            CHECK_OK(c, eng_launch(c, eng_program_find(p, names[k]), a, k == 1 ? 3 : 2));
        }
    CHECK_OK(c, eng_sync(c));
    int32_t z[3] = {0, 0, 0};
    *total = eng_field_read(t, z, 0);
    *b_sum = 0;
    for (int x = -40; x < 40; x++)
        for (int y = 0; y < 8; y++)
            for (int zz = 0; zz < 8; zz++)
                *b_sum += et_at(b, x, y, zz, 0);
    eng_stats st;
    eng_get_stats(c, &st);
    *fused = st.tasks_fused;
    ctx = saved;
    eng_destroy(c);
}

static void test_stencil_reduction_fuses(void)
{
    float te = 0, tq = 0, be = 1, bq = 1;
    uint64_t fe = 0, fq = 0;
    run_sr(1, &te, &be, &fe);
    run_sr(0, &tq, &bq, &fq);
    /* by hand: q's four blocks hold (local n) % 5 and are 8 voxels apart, so a stencil
     * reaching past a block's end reads 0; two rounds add the stencil's sum twice */
    double want = 0;
    for (int x = -40; x < 40; x++)
        for (int y = 0; y < 8; y++)
            for (int z = 0; z < 8; z++)
                if (sr_q(x, y, z) >= 0)
                    want += 2.0 * ((sr_q(x - 1, y, z) > 0 ? sr_q(x - 1, y, z) : 0) + sr_q(x, y, z) +
                                   (sr_q(x + 1, y, z) > 0 ? sr_q(x + 1, y, z) : 0));
    CHECK(te == (float)want);
    CHECK(te == tq);
    CHECK(be == 0.0f && bq == 0.0f);
    CHECK(fe == 0);
    CHECK(fq == 5);
}

static void test_errors(void)
{
    eng_program *p = NULL;
    const char *bad = "kernel k(field<f32> a) {\n    for (I in a) { a[I] = b; }\n}\n";
    CHECK(eng_program_compile(ctx, "bad.pk", bad, strlen(bad), &p) == ENG_ECOMPILE);
    CHECK(strstr(eng_error(ctx), "bad.pk:2:27") != NULL);
    CHECK(strstr(eng_error(ctx), "^") != NULL);
    eng_program *q = et_compile(ctx, "kernel k(field<f32> a, f32 s) { for (I in a) { a[I] = s; } }\n");
    if (!q)
        return;
    eng_kernel *k = eng_program_find(q, "k");
    eng_field *v = et_field(ctx, "err_v", 3, ENG_VEC3, 0.0f);
    eng_arg one[1] = {et_f(v)};
    CHECK(eng_launch(ctx, k, one, 1) == ENG_EINVAL);
    eng_arg two[2] = {et_f(v), et_s(1.0)};
    CHECK(eng_launch(ctx, k, two, 2) == ENG_ETYPE);
    CHECK(strstr(eng_error(ctx), "'a'") != NULL);
}

int main(void)
{
    ctx = et_context(2);
    test_laplacian();
    test_red_black();
    test_struct_reductions();
    test_downsample();
    test_gather();
    test_read_after_write();
    test_gather_vec3();
    test_near_sample();
    test_near_sample_written();
    test_geometry();
    test_activation();
    test_reductions();
    test_vec3_field();
    test_vec3_stencil();
    test_modes();
    test_stencil_reduction_fuses();
    test_errors();
    eng_destroy(ctx);
    if (check_failures)
        fprintf(stderr, "%d checks failed\n", check_failures);
    return check_failures ? 1 : 0;
}
