/* Host statistics and clearing of fields whose leaf blocks are not 8^3 (a scene may declare
 * any layout): block and voxel counts, sums and largest magnitudes, and eng_field_clear must
 * see the field's own blocks, dense or bitmasked, and not report an empty field. Expected
 * values are worked out here from the voxels written, independently of the tree. */
#include "engine_test.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

static eng_context *ctx;

static const int pts[][3] = {{0, 0, 0}, {1, 0, 0}, {5, 0, 0}, {-1, -1, -1}, {100, -50, 7}, {3, 3, 3}};
static const float vals[] = {1.0f, 2.0f, 3.0f, -4.0f, 5.0f, 0.5f};
enum { NPTS = sizeof vals / sizeof vals[0] };

static int floor_div(int a, int b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

/* Distinct size^3 blocks (at multiples of size, shifted by shift) that the points fall in. */
static int blocks_touched(int size, int shift)
{
    int n = 0;
    for (int i = 0; i < NPTS; i++) {
        int seen = 0;
        for (int j = 0; j < i && !seen; j++) {
            seen = 1;
            for (int a = 0; a < 3; a++)
                seen &= floor_div(pts[i][a] - shift, size) == floor_div(pts[j][a] - shift, size);
        }
        n += !seen;
    }
    return n;
}

/* Distinct 8^3 blocks at multiples of 8 holding an active cell: the points' cells when
 * masked, else every cell of the points' leaf^3 blocks. */
static uint64_t host_blocks(int leaf, int shift, int masked)
{
    int32_t seen[64][3];
    int n = 0;
    for (int i = 0; i < NPTS; i++) {
        int lo[3];
        for (int a = 0; a < 3; a++)
            lo[a] = masked ? pts[i][a] : floor_div(pts[i][a] - shift, leaf) * leaf + shift;
        int span = masked ? 1 : leaf;
        for (int x = 0; x < span; x++)
            for (int y = 0; y < span; y++)
                for (int z = 0; z < span; z++) {
                    int32_t b[3] = {floor_div(lo[0] + x, 8), floor_div(lo[1] + y, 8),
                                    floor_div(lo[2] + z, 8)};
                    int k = 0;
                    while (k < n && memcmp(seen[k], b, sizeof b))
                        k++;
                    if (k == n && n < 64)
                        memcpy(seen[n++], b, sizeof b);
                }
    }
    return (uint64_t)n;
}

/* The host's block view: 8^3 blocks at multiples of 8 whose masks hold exactly the active
 * voxels, with the written values where they were written. */
static void check_host_blocks(eng_field *f, uint64_t voxels, float bg)
{
    uint64_t nb = eng_field_block_count(f);
    int32_t o[3 * 64];
    CHECK(nb <= 64);
    if (nb > 64)
        return;
    CHECK_EQ(eng_field_block_origins(f, o, nb), nb);
    uint64_t on = 0;
    int found = 0;
    for (uint64_t b = 0; b < nb; b++) {
        float v[512];
        uint64_t m[8];
        CHECK((o[3 * b] & 7) == 0 && (o[3 * b + 1] & 7) == 0 && (o[3 * b + 2] & 7) == 0);
        CHECK_EQ(eng_field_read_block(f, o + 3 * b, v, m), 1);
        for (int n = 0; n < 512; n++) {
            int x = o[3 * b] + n / 64, y = o[3 * b + 1] + (n / 8) % 8, z = o[3 * b + 2] + n % 8;
            int set = (int)(m[n >> 6] >> (n & 63) & 1);
            on += (uint64_t)set;
            float want = bg;
            for (int i = 0; i < NPTS; i++)
                if (pts[i][0] == x && pts[i][1] == y && pts[i][2] == z) {
                    want = vals[i];
                    found += set;
                }
            CHECK(v[n] == want);
        }
    }
    CHECK_EQ(on, voxels);
    CHECK_EQ(found, NPTS);
}

/* leaf: the layout's block size; shift: where its blocks start (the layout's offset mod leaf) */
static void check_layout(const char *name, const char *layout, int leaf, int shift, int masked)
{
    const float bg = 0.25f;
    eng_field *f = et_field_layout(ctx, name, layout, ENG_F32, bg);
    for (int i = 0; i < NPTS; i++)
        et_put(ctx, f, pts[i][0], pts[i][1], pts[i][2], vals[i]);
    int blocks = blocks_touched(leaf, shift);
    CHECK(blocks >= 3); /* the points were chosen so: a check on the check */
    double sum = 0, max = 0;
    for (int i = 0; i < NPTS; i++) {
        sum += vals[i];
        if (fabs(vals[i]) > max)
            max = fabs(vals[i]);
    }
    /* dense leaves: every voxel of an active block is active, the unwritten ones at bg */
    uint64_t voxels = masked ? NPTS : (uint64_t)blocks * leaf * leaf * leaf;
    if (!masked)
        sum += (double)(voxels - NPTS) * bg;
    /* blocks as the host sees them: the 8^3 at multiples of 8 of each active cell */
    CHECK_EQ(eng_field_block_count(f), host_blocks(leaf, shift, masked));
    CHECK_EQ(eng_field_active_voxels(f), voxels);
    check_host_blocks(f, voxels, bg);
    CHECK(fabs(eng_field_reduce(f, ENG_REDUCE_SUM) - sum) < 1e-9);
    CHECK(fabs(eng_field_reduce(f, ENG_REDUCE_MAX_ABS) - max) < 1e-9);

    eng_field_clear(ctx, f);
    CHECK_EQ(eng_field_block_count(f), 0);
    CHECK_EQ(eng_field_active_voxels(f), 0);
    for (int i = 0; i < NPTS; i++)
        CHECK(et_at(f, pts[i][0], pts[i][1], pts[i][2], 0) == bg);
    /* A block written from the host (as a VDB import does): the mask's cells take the values;
     * a cell written before and outside the mask goes back to the background, inactive where
     * the leaf has per-voxel activity. */
    et_put(ctx, f, 17, 18, 19, 9.0f);
    float blk[512];
    uint64_t m[8] = {0};
    for (int n = 0; n < 512; n++)
        blk[n] = (float)n;
    for (int n = 0; n < 512; n += 7)
        m[n >> 6] |= 1ull << (n & 63);
    const int32_t org[3] = {16, 16, 16};
    CHECK_OK(ctx, eng_field_write_block(ctx, f, org, blk, m));
    int set = 0, right = 0;
    for (int n = 0; n < 512; n++) {
        int on = (int)(m[n >> 6] >> (n & 63) & 1);
        set += on;
        right += et_at(f, 16 + n / 64, 16 + (n / 8) % 8, 16 + n % 8, 0) == (on ? (float)n : bg);
    }
    CHECK_EQ(right, 512);
    CHECK(et_at(f, 17, 18, 19, 0) == bg); /* cell 1*64 + 2*8 + 3 = 83 is not a multiple of 7 */
    if (masked)
        CHECK_EQ(eng_field_active_voxels(f), (uint64_t)set);
    float back[512];
    uint64_t bm[8];
    CHECK_EQ(eng_field_read_block(f, org, back, bm), 1);
    if (masked)
        CHECK(!memcmp(bm, m, sizeof m));
    eng_field_clear(ctx, f);

    /* and the field takes writes again */
    et_put(ctx, f, 9, 9, 9, 7.0f);
    CHECK_EQ(eng_field_active_voxels(f), masked ? 1u : (uint64_t)leaf * leaf * leaf);
    CHECK(et_at(f, 9, 9, 9, 0) == 7.0f);
}

int main(void)
{
    ctx = et_context(2);
    check_layout("dense4", "offset(-128).pointer(ijk,64).dense(ijk,4)", 4, 0, 0);
    check_layout("masked4", "offset(-128).pointer(ijk,64).bitmasked(ijk,4)", 4, 0, 1);
    /* 8^3 leaves whose blocks start 4 voxels off the multiples of 8 */
    check_layout("shifted", "offset(-2044).pointer(ijk,32).pointer(ijk,16).dense(ijk,8)", 8, 4, 0);
    /* the 8^3 block path gives the same answers for the default layout */
    eng_field *d = et_field_layout(ctx, "dflt", "", ENG_F32, 0.0f);
    et_put(ctx, d, 3, 4, 5, -6.0f);
    CHECK_EQ(eng_field_block_count(d), 1);
    CHECK_EQ(eng_field_active_voxels(d), 512);
    CHECK(fabs(eng_field_reduce(d, ENG_REDUCE_MAX_ABS) - 6.0) < 1e-9);
    eng_destroy(ctx);
    CHECK_DONE();
}
