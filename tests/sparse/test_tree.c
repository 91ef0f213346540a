/* The host-side API: blocks in the default layout are VDB leaves (512 contiguous floats in VDB's
 * x-major order), block iteration and listing, deactivation, backgrounds, vec3 fields, a
 * bitmasked leaf, and reads that never allocate. */
#include <stdlib.h>
#include <string.h>

#include "sparse/tree.h"
#include "test_util.h"

static int floor8(int v) { return v >= 0 ? v / 8 * 8 : -((-v + 7) / 8 * 8); }

typedef struct visit {
    int count;
    int origins_ok;
    plm_tree *t;
    int field;
} visit;

static int on_block(void *user, const int32_t origin[3], float *data)
{
    visit *v = user;
    v->count++;
    float *again = plm_tree_block(v->t, v->field, origin[0], origin[1], origin[2], 0, NULL);
    v->origins_ok += again == data && origin[0] % 8 == 0;
    return 0;
}

static void test_default_blocks(void)
{
    plm_tree *t = NULL;
    char err[256];
    const char *layout = PLM_LAYOUT_DEFAULT ".place(density, vel:vec3)";
    CHECK(plm_tree_create(layout, 64u << 20, &t, err, sizeof err) == 0, "%s", err);
    if (!t)
        return;
    int fd = plm_tree_field(t, "density"), fv = plm_tree_field(t, "vel");
    CHECK(fd == 0 && fv == 1 && plm_tree_field(t, "x") == -1, "field ids");
    plm_block_shape sh;
    CHECK(plm_tree_block_shape(t, fd, &sh) == 0 && sh.dims[0] == 8 && sh.dims[1] == 8 &&
              sh.dims[2] == 8 && sh.voxels == 512 && sh.stride == 1 && sh.components == 1,
          "density block shape");
    CHECK(plm_tree_block_shape(t, fv, &sh) == 0 && sh.stride == 3 && sh.components == 3,
          "vel block shape");
    float bgd = 0.5f, bgv[3] = {1, 2, 3};
    plm_tree_set_background(t, fd, &bgd);
    plm_tree_set_background(t, fv, bgv);

    /* The leaf's block of background values (what generated reads take for an inactive
     * block) follows each change, component by component, and the other field's stays. */
    {
        plm_runtime *rt = plm_tree_runtime(t);
        const plm_rt_field *rd = &rt->fields[fd], *rv = &rt->fields[fv];
        const plm_rt_snode *leaf = &rt->snodes[rd->snode];
        CHECK(leaf->bg_container != NULL, "dense leaf has a background block");
        float bgv2[3] = {-4, 5, 6};
        plm_tree_set_background(t, fv, bgv2);
        int ok = leaf->bg_container != NULL;
        for (int32_t i = 0; ok && i < leaf->num_cells; i++) {
            const uint8_t *cell = leaf->bg_container + leaf->header_bytes;
            const float *dv = (const float *)(cell + rv->offset + (uint64_t)i * rv->stride);
            const float *dd = (const float *)(cell + rd->offset + (uint64_t)i * rd->stride);
            ok = dd[0] == 0.5f && dv[0] == -4.0f && dv[1] == 5.0f && dv[2] == 6.0f;
        }
        CHECK(ok, "background block holds density 0.5 and vel (-4, 5, 6) in every cell");
        plm_tree_set_background(t, fv, bgv);
    }

    /* Reading never allocates. */
    uint64_t before = plm_rt_bytes_in_use(plm_tree_runtime(t));
    float got[3];
    CHECK(plm_tree_read(t, fd, 100, -200, 300, got) == 0 && got[0] == 0.5f, "background");
    CHECK(plm_tree_read(t, fv, 100, -200, 300, got) == 0 && got[2] == 3.0f, "vec3 background");
    CHECK(plm_tree_block(t, fd, 100, -200, 300, 0, NULL) == NULL, "no block");
    CHECK(plm_rt_bytes_in_use(plm_tree_runtime(t)) == before, "reads allocated");

    /* A block filled through its pointer in VDB's order reads back voxel by voxel. */
    int32_t o[3];
    int32_t p[3] = {-5, 17, 100};
    float *d = plm_tree_block(t, fd, p[0], p[1], p[2], 1, o);
    CHECK(d != NULL, "block");
    if (!d)
        return;
    CHECK(o[0] == floor8(p[0]) && o[1] == floor8(p[1]) && o[2] == floor8(p[2]),
          "origin (%d,%d,%d)", o[0], o[1], o[2]);
    int fresh = 0;
    for (int i = 0; i < 512; i++)
        fresh += d[i] == 0.5f;
    CHECK(fresh == 512, "a new block holds the background (%d of 512)", fresh);
    for (int i = 0; i < 512; i++)
        d[i] = (float)i;
    for (int x = 0; x < 8; x++)
        for (int y = 0; y < 8; y++)
            for (int z = 0; z < 8; z++) {
                float v;
                plm_tree_read(t, fd, o[0] + x, o[1] + y, o[2] + z, &v);
                CHECK(v == (float)((x << 6) | (y << 3) | z), "VDB order at (%d,%d,%d)", x, y, z);
            }
    /* vel lives in the same block, SoA: 512 vec3 after the 512 densities. */
    float *dv = plm_tree_block(t, fv, p[0], p[1], p[2], 0, NULL);
    CHECK(dv == d + 512, "vel array follows density in the block");
    float w[3] = {7, 8, 9};
    plm_tree_write(t, fv, o[0] + 1, o[1] + 2, o[2] + 3, w);
    int k = (1 << 6) | (2 << 3) | 3;
    CHECK(dv[3 * k] == 7 && dv[3 * k + 1] == 8 && dv[3 * k + 2] == 9, "vec3 write in place");
    CHECK(dv[0] == 1 && dv[1] == 2 && dv[2] == 3, "vec3 background filled");

    /* More blocks, including negative coordinates at the edges of the index range. */
    int32_t pts[][3] = {{-2048, -2048, -2048}, {2047, 2047, 2047}, {0, 0, 0}, {-1, -1, -1},
                        {1000, -1000, 5}, {1001, -999, 6}};
    for (int i = 0; i < 6; i++) {
        float v = (float)(100 + i);
        plm_tree_write(t, fd, pts[i][0], pts[i][1], pts[i][2], &v);
    }
    for (int i = 0; i < 6; i++) {
        float v;
        CHECK(plm_tree_read(t, fd, pts[i][0], pts[i][1], pts[i][2], &v) == 1 &&
                  v == (float)(100 + i),
              "point %d", i);
    }
    /* 1 + 5 distinct blocks ({1000,-1000,5} and {1001,-999,6} share one). */
    visit vis = {0, 0, t, fd};
    CHECK(plm_tree_foreach_block(t, fd, on_block, &vis) == 0, "foreach");
    CHECK(vis.count == 6 && vis.origins_ok == 6, "visited %d blocks, %d consistent", vis.count,
          vis.origins_ok);
    int64_t n = plm_tree_list_blocks(t, fd, 2);
    CHECK(n == 6, "listed %lld", (long long)n);
    int seen_edge = 0;
    for (int64_t i = 0; i < n; i++) {
        int32_t org[3];
        float *data;
        CHECK(plm_tree_block_at(t, fd, i, org, &data) == 0, "block_at");
        seen_edge += org[0] == 2040 && org[1] == 2040 && org[2] == 2040 && data[511] == 101.0f;
    }
    CHECK(seen_edge == 1, "the block at the upper edge");
    CHECK(plm_tree_block_at(t, fd, 6, o, &d) == -1, "past the list");

    /* Deactivating a block: its voxels read the background again; the others stay. */
    plm_tree_deactivate_block(t, fd, -5, 17, 100);
    CHECK(plm_tree_read(t, fd, -5, 17, 100, got) == 0 && got[0] == 0.5f, "deactivated");
    CHECK(plm_tree_is_active(t, sh.snode, -5, 17, 100) == 0, "block inactive");
    CHECK(plm_tree_is_active(t, sh.snode, 0, 0, 0) == 1, "other block active");
    CHECK(plm_tree_list_blocks(t, fd, 1) == 5, "five left");
    plm_tree_gc(t);
    CHECK(plm_tree_list_blocks(t, fd, 1) == 5, "gc keeps the active blocks");
    plm_tree_stats st;
    plm_tree_stats_get(t, &st);
    CHECK(st.leaf_value_bytes == 5 * 512 * 16, "leaf bytes %llu",
          (unsigned long long)st.leaf_value_bytes);
    CHECK(st.snode[2].live_cells == 5 && st.snode[2].chunk_bytes > 0, "stats");
    CHECK(st.bytes_in_use <= st.budget, "in budget");
    plm_tree_destroy(t);
}

static void test_other_leaves(void)
{
    plm_tree *t = NULL;
    char err[256];
    /* A bitmasked leaf: a block exists, voxels inside it are active one by one. */
    CHECK(plm_tree_create("offset(-64).pointer(ijk,16).bitmasked(ijk,8).place(a)", 16u << 20, &t,
                          err, sizeof err) == 0, "%s", err);
    if (t) {
        float v = 3.0f, got;
        plm_tree_write(t, 0, -64, 0, 1, &v);
        CHECK(plm_tree_read(t, 0, -64, 0, 1, &got) == 1 && got == 3.0f, "written voxel");
        CHECK(plm_tree_read(t, 0, -64, 0, 2, &got) == 0, "neighbour inactive");
        float *d = plm_tree_block(t, 0, -60, 4, 4, 0, NULL);
        CHECK(d && d[1] == 3.0f, "block data");
        CHECK(plm_tree_list_blocks(t, 0, 1) == 1, "one block");
        CHECK(plm_tree_listgen(t, 2, 1) == 1, "one active voxel");
        plm_tree_destroy(t);
    }
    /* A pointer leaf has no blocks. */
    CHECK(plm_tree_create("dense(ij,4).pointer(ij,4).place(a)", 16u << 20, &t, err, sizeof err) == 0,
          "%s", err);
    if (t) {
        plm_block_shape sh;
        CHECK(plm_tree_block_shape(t, 0, &sh) == -1, "no blocks");
        CHECK(plm_tree_block(t, 0, 0, 0, 0, 1, NULL) == NULL, "no block pointer");
        CHECK(plm_tree_list_blocks(t, 0, 1) == -1, "no block list");
        CHECK(plm_tree_read(t, 5, 0, 0, 0, NULL) == -1 && plm_tree_write(t, -1, 0, 0, 0, NULL) == -1,
              "bad field ids");
        plm_tree_destroy(t);
    }
}

int main(void)
{
    test_default_blocks();
    test_other_leaves();
    return TEST_RESULT();
}
