/* Per-block kernels: struct-fors whose body acts only at voxels whose index has some low bits
 * clear (`(I.x & 7) == 0 && ...`, the first voxel of each 8^3 block). The code generator runs
 * one cell of such a block instead of all 512 when the block starts at a multiple of its size
 * (engine/codegen/block_head.c); these tests compare every variant of the pattern with counts
 * made in C, including the ones where running a single cell would be wrong: masks that do not
 * cover the block, tests on some axes only, work outside the `if`, and blocks that do not
 * start at a multiple of 8. */
#include "engine_test.h"

#include <stdint.h>

static eng_context *ctx;

/* Active blocks: a scattered third of the 8^3 blocks of [-64, 64)^3. */
static int block_on(int bx, int by, int bz) { return ((bx * 5 + by * 11 + bz * 3) % 3) == 0; }

/* Writes 1 into every voxel of the pattern's blocks, the blocks' origins shifted by `shift`
 * voxels (the blocks of a layout whose offset is not a multiple of 8). Returns the count. */
static int fill(eng_field *f, int shift)
{
    float vals[512];
    for (int n = 0; n < 512; n++)
        vals[n] = 1.0f;
    int blocks = 0;
    for (int bx = -8; bx < 8; bx++)
        for (int by = -8; by < 8; by++)
            for (int bz = -8; bz < 8; bz++) {
                if (!block_on(bx, by, bz))
                    continue;
                int32_t o[3] = {bx * 8 + shift, by * 8 + shift, bz * 8 + shift};
                if (shift == 0) {
                    CHECK_OK(ctx, eng_field_write_block(ctx, f, o, vals, NULL));
                } else {
                    /* block access wants origins at multiples of 8: one voxel activates the
                     * block, the kernel `ones` fills the rest */
                    et_put(ctx, f, o[0], o[1], o[2], 1.0f);
                }
                blocks++;
            }
    return blocks;
}

/* Voxels of the pattern's blocks (origins shifted by shift) where test(x, y, z) holds. */
static long count_where(int shift, int (*test)(int, int, int))
{
    long n = 0;
    for (int bx = -8; bx < 8; bx++)
        for (int by = -8; by < 8; by++)
            for (int bz = -8; bz < 8; bz++) {
                if (!block_on(bx, by, bz))
                    continue;
                for (int v = 0; v < 512; v++) {
                    int x = bx * 8 + shift + v / 64, y = by * 8 + shift + (v / 8) % 8,
                        z = bz * 8 + shift + v % 8;
                    n += test(x, y, z);
                }
            }
    return n;
}

static int head8(int x, int y, int z) { return (x & 7) == 0 && (y & 7) == 0 && (z & 7) == 0; }
static int head16(int x, int y, int z) { return (x & 15) == 0 && (y & 15) == 0 && (z & 15) == 0; }
static int head4(int x, int y, int z) { return (x & 3) == 0 && (y & 3) == 0 && (z & 3) == 0; }
static int row_x(int x, int y, int z) { (void)y, (void)z; return (x & 7) == 0; }
static int row_x4(int x, int y, int z) { (void)y, (void)z; return (x & 3) == 0; }
static int head_xz(int x, int y, int z) { (void)y; return (x & 7) == 0 && (z & 7) == 0; }

static const char *src =
    "kernel ones(field<f32> q) { for (I in q) { q[I] = 1.0; } }\n"
    "kernel heads(field<f32> q, field<f32, 0> n) {\n"
    "    n[] = 0.0;\n"
    "    for (I in q) {\n"
    "        if ((I.x & 7) == 0 && (I.y & 7) == 0 && (I.z & 7) == 0) { n[] += 1.0; }\n"
    "    }\n"
    "}\n"
    "kernel heads16(field<f32> q, field<f32, 0> n) {\n"
    "    n[] = 0.0;\n"
    "    for (I in q) {\n"
    "        if ((I.x & 15) == 0 && (I.y & 15) == 0 && (I.z & 15) == 0) { n[] += 1.0; }\n"
    "    }\n"
    "}\n"
    "kernel heads4(field<f32> q, field<f32, 0> n) {\n"
    "    n[] = 0.0;\n"
    "    for (I in q) {\n"
    "        if ((I.x & 3) == 0 && (I.y & 3) == 0 && (I.z & 3) == 0) { n[] += 1.0; }\n"
    "    }\n"
    "}\n"
    /* one axis, and a test mixed with a read: the fast copy shortens only x */
    "kernel rows(field<f32> q, field<f32, 0> n) {\n"
    "    n[] = 0.0;\n"
    "    for (I in q) {\n"
    "        if (q[I] > 0.5 && (I.x & 7) == 0) { n[] += 1.0; }\n"
    "    }\n"
    "}\n"
    "kernel rows4(field<f32> q, field<f32, 0> n) {\n"
    "    n[] = 0.0;\n"
    "    for (I in q) {\n"
    "        if (q[I] > 0.5 && (I.x & 3) == 0) { n[] += 1.0; }\n"
    "    }\n"
    "}\n"
    "kernel heads_xz(field<f32> q, field<f32, 0> n) {\n"
    "    n[] = 0.0;\n"
    "    for (I in q) {\n"
    "        if (0 == (7 & I.z) && (I.x & 7) == 0) { n[] += 1.0; }\n"
    "    }\n"
    "}\n"
    /* a write outside the if: every voxel runs */
    "kernel heads_and_copy(field<f32> q, field<f32> c, field<f32, 0> n) {\n"
    "    n[] = 0.0;\n"
    "    for (I in q) {\n"
    "        c[I] = 2.0;\n"
    "        if ((I.x & 7) == 0 && (I.y & 7) == 0 && (I.z & 7) == 0) { n[] += 1.0; }\n"
    "    }\n"
    "}\n"
    /* an else branch runs where the test fails */
    "kernel heads_else(field<f32> q, field<f32, 0> n) {\n"
    "    n[] = 0.0;\n"
    "    for (I in q) {\n"
    "        if ((I.x & 7) == 0 && (I.y & 7) == 0 && (I.z & 7) == 0) { n[] += 1.0; } else { n[] += 0.5; }\n"
    "    }\n"
    "}\n"
    /* the smoke solver's prune: blocks of q that keep lacks are deactivated */
    "kernel prune(field<f32> keep, field<f32> q) {\n"
    "    for (I in q) {\n"
    "        if ((I.x & 7) == 0 && (I.y & 7) == 0 && (I.z & 7) == 0 && !is_active(keep, I)) {\n"
    "            deactivate(q, I);\n"
    "        }\n"
    "    }\n"
    "}\n";

static double run_count(eng_program *p, const char *kernel, eng_field *q, eng_field *n)
{
    eng_arg a[2] = {et_f(q), et_f(n)};
    if (et_run(ctx, p, kernel, a, 2))
        return -1;
    return et_at(n, 0, 0, 0, 0);
}

static void test_counts(eng_program *p, eng_field *q, eng_field *n, int shift, const char *what)
{
    struct {
        const char *kernel;
        int (*test)(int, int, int);
    } cases[] = {{"heads", head8},   {"heads16", head16}, {"heads4", head4},
                 {"rows", row_x},    {"rows4", row_x4},   {"heads_xz", head_xz}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double got = run_count(p, cases[i].kernel, q, n);
        long want = count_where(shift, cases[i].test);
        if (got != (double)want) {
            fprintf(stderr, "%s, %s: counted %g voxels, expected %ld\n", what, cases[i].kernel, got,
                    want);
            check_failures++;
        }
    }
}

int main(void)
{
    ctx = et_context(2);
    eng_program *p = et_compile(ctx, src);
    eng_field *n = et_field(ctx, "n", 0, ENG_F32, 0.0f);

    /* the default layout: blocks start at multiples of 8 */
    eng_field *q = et_field(ctx, "q", 3, ENG_F32, 0.0f);
    int blocks = fill(q, 0);
    CHECK(blocks > 100);
    CHECK(count_where(0, head8) == blocks); /* the C side counts what the kernels should */
    test_counts(p, q, n, 0, "aligned blocks");

    eng_field *c = et_field(ctx, "c", 3, ENG_F32, 0.0f);
    eng_arg hc[3] = {et_f(q), et_f(c), et_f(n)};
    if (et_run(ctx, p, "heads_and_copy", hc, 3) == 0) {
        CHECK(et_at(n, 0, 0, 0, 0) == (float)blocks);
        CHECK(eng_field_active_voxels(c) == (uint64_t)blocks * 512);
        CHECK(et_at(c, 3, 5, 7, 0) == (block_on(0, 0, 0) ? 2.0f : 0.0f));
    }
    CHECK(run_count(p, "heads_else", q, n) == blocks + 0.5 * 511.0 * blocks);

    /* blocks starting 4 voxels past a multiple of 8: the voxel with all low bits clear is in
     * the middle of each block, and the loops must visit every cell to find it */
    eng_field *s = et_field_layout(ctx, "s", "offset(-2044).pointer(ijk,32).pointer(ijk,16).dense(ijk,8)",
                                   ENG_F32, 0.0f);
    int sblocks = fill(s, 4);
    CHECK(sblocks == blocks);
    CHECK(eng_field_active_voxels(s) == (uint64_t)blocks * 512);
    eng_arg so[1] = {et_f(s)};
    et_run(ctx, p, "ones", so, 1); /* fill() set one voxel per block */
    test_counts(p, s, n, 4, "blocks at 4 + 8k");

    /* prune: keep has every other block of q */
    eng_field *keep = et_field(ctx, "keep", 3, ENG_F32, 0.0f);
    int kept = 0;
    for (int bx = -8; bx < 8; bx++)
        for (int by = -8; by < 8; by++)
            for (int bz = -8; bz < 8; bz++)
                if (block_on(bx, by, bz) && ((bx + by + bz) & 1) == 0) {
                    et_put(ctx, keep, bx * 8 + 1, by * 8 + 2, bz * 8 + 3, 1.0f);
                    kept++;
                }
    eng_arg pk[2] = {et_f(keep), et_f(q)};
    if (et_run(ctx, p, "prune", pk, 2) == 0) {
        CHECK(eng_field_block_count(q) == (uint64_t)kept);
        CHECK(eng_field_active_voxels(q) == (uint64_t)kept * 512);
        int wrong = 0;
        for (int bx = -8; bx < 8; bx++)
            for (int by = -8; by < 8; by++)
                for (int bz = -8; bz < 8; bz++) {
                    int want = block_on(bx, by, bz) && ((bx + by + bz) & 1) == 0;
                    wrong += (et_at(q, bx * 8 + 7, by * 8 + 6, bz * 8 + 5, 0) == 1.0f) != want;
                }
        CHECK(wrong == 0);
    }
    eng_destroy(ctx);
    if (check_failures)
        fprintf(stderr, "%d checks failed\n", check_failures);
    return check_failures ? 1 : 0;
}
