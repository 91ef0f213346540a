/* Layout parsing: geometry of valid layouts checked against sizes worked out by hand, and
 * errors that name the column of the problem. */
#include <string.h>

#include "sparse/layout.h"
#include "test_util.h"

static plm_layout *parse_ok(const char *text)
{
    plm_layout *L = NULL;
    char err[256];
    int rc = plm_layout_parse(text, &L, err, sizeof err);
    CHECK(rc == 0 && L, "'%s' should parse: %s", text, err);
    return L;
}

static void test_default(void)
{
    plm_layout *L = parse_ok(PLM_LAYOUT_DEFAULT ".place(density)");
    if (!L)
        return;
    const plm_rt_config *c = &L->cfg;
    CHECK(c->num_snodes == 4, "%d snodes", c->num_snodes);
    CHECK(c->snodes[1].kind == PLM_RT_POINTER && c->snodes[2].kind == PLM_RT_POINTER &&
              c->snodes[3].kind == PLM_RT_DENSE, "kinds");
    /* A VDB leaf: 8^3 floats. */
    CHECK(c->snodes[3].container_bytes == 512 * 4, "leaf bytes %llu",
          (unsigned long long)c->snodes[3].container_bytes);
    /* pointer(16^3): 8-byte count, 4096 u32 locks, 4096 pointers. */
    CHECK(c->snodes[2].container_bytes == 8 + 4096 * 4 + 4096 * 8, "p16 bytes");
    CHECK(c->snodes[1].container_bytes == 8 + 32768 * 4 + 32768 * 8, "p32 bytes");
    CHECK(c->snodes[2].alloc_bytes == 2048, "leaf blocks are allocated by the p16 allocator");
    for (int a = 0; a < 3; a++) {
        CHECK(c->snodes[3].extent_bits[a] == 12, "4096 voxels per axis");
        CHECK(c->snodes[1].coord_offset[a] == -2048, "offset");
    }
    CHECK(c->fields[0].offset == 0 && c->fields[0].stride == 4, "density SoA");
    CHECK(plm_layout_field(L, "density") == 0 && plm_layout_field(L, "nope") == -1, "lookup");
    CHECK(plm_layout_block_snode(L, 0) == 2, "blocks are the cells of the p16 level");
    /* VDB leaf order: offset (x&7)<<6 | (y&7)<<3 | (z&7), for a voxel with negative index. */
    plm_runtime fake;
    memset(&fake, 0, sizeof fake);
    memcpy(fake.snodes, c->snodes, sizeof c->snodes);
    int x = -3, y = 13, z = 1000;
    int32_t want = ((x & 7) << 6) | ((y & 7) << 3) | (z & 7);
    CHECK(plm_rt_cell_index(&fake, 3, x, y, z) == want, "leaf index %d want %d",
          plm_rt_cell_index(&fake, 3, x, y, z), want);
    /* Level above: the 16^3 block grid of a 128^3 node, x slowest. */
    int ux = x + 2048, uy = y + 2048, uz = z + 2048;
    want = (((ux >> 3) & 15) << 8) | (((uy >> 3) & 15) << 4) | ((uz >> 3) & 15);
    CHECK(plm_rt_cell_index(&fake, 2, x, y, z) == want, "p16 index");
    CHECK(plm_rt_cell_index(&fake, 3, -2049, 0, 0) == -1, "below the range");
    CHECK(plm_rt_cell_index(&fake, 3, 2048, 0, 0) == -1, "above the range");
    CHECK(plm_rt_cell_index(&fake, 3, 2047, -2048, 0) >= 0, "edges inside");
    plm_layout_free(L);
}

static void test_fields(void)
{
    plm_layout *L = parse_ok(" dense ( ijk , 4 ) . place ( a , v : vec3 ) ");
    if (L) {
        const plm_rt_field *f = L->cfg.fields;
        CHECK(f[0].offset == 0 && f[0].stride == 4 && f[0].components == 1, "a soa");
        CHECK(f[1].offset == 64 * 4 && f[1].stride == 12 && f[1].components == 3, "v soa");
        CHECK(L->cfg.snodes[1].container_bytes == 64 * 16, "container");
        plm_layout_free(L);
    }
    L = parse_ok("dense(ijk,4).place_aos(a, v:vec3, b:f32)");
    if (L) {
        const plm_rt_field *f = L->cfg.fields;
        CHECK(f[0].offset == 0 && f[0].stride == 20, "a aos");
        CHECK(f[1].offset == 4 && f[1].stride == 20, "v aos");
        CHECK(f[2].offset == 16 && f[2].stride == 20, "b aos");
        plm_layout_free(L);
    }
    /* Per-axis sizes and axis order: dense(kj,2,4): k slowest. */
    L = parse_ok("dense(kj,2,4).place(a)");
    if (L) {
        const plm_rt_snode *s = &L->cfg.snodes[1];
        CHECK(s->axis_bits[2] == 1 && s->axis_bits[1] == 2 && s->axis_bits[0] == 0, "bits");
        CHECK(s->index_shift[2] == 2 && s->index_shift[1] == 0, "k slowest");
        plm_layout_free(L);
    }
    /* Two chains under the root, each container 8-aligned in the root cell. */
    L = parse_ok("dense(i,2).place(a); offset(-8).pointer(ij,4).dense(ij,2).place(b)");
    if (L) {
        CHECK(L->num_chains == 2 && L->cfg.num_snodes == 4, "chains");
        CHECK(L->cfg.snodes[0].first_child == 1 && L->cfg.snodes[1].next_sibling == 2, "links");
        CHECK(L->cfg.snodes[2].offset_in_parent == 8, "second chain after 8 bytes");
        CHECK(L->cfg.snodes[3].coord_offset[1] == -8 && L->cfg.snodes[1].coord_offset[0] == 0,
              "offsets per chain");
        CHECK(L->cfg.fields[1].snode == 3, "b on the dense leaf of chain 2");
        plm_layout_free(L);
    }
    L = parse_ok("pointer(i,8).dense(i,4).dynamic(j,128).place(p:vec3)");
    if (L) {
        const plm_rt_snode *d = &L->cfg.snodes[3];
        CHECK(d->kind == PLM_RT_DYNAMIC && d->num_cells == 128, "dynamic");
        CHECK(d->dyn_log2_chunk == 6 && d->alloc_bytes == 8 + 64 * 12, "chunks of 64 cells");
        plm_layout_free(L);
    }
}

static void expect_error(const char *text, const char *at, const char *what)
{
    plm_layout *L = NULL;
    char err[256] = "";
    int rc = plm_layout_parse(text, &L, err, sizeof err);
    CHECK(rc == -1 && L == NULL, "'%s' should fail", text);
    /* The column is computed here from where the offending text sits (its last occurrence). */
    const char *p = text + strlen(text);
    if (at)
        for (const char *q = strstr(text, at); q; q = strstr(q + 1, at))
            p = q;
    char want[64];
    snprintf(want, sizeof want, "column %d:", (int)(p - text) + 1);
    CHECK(strncmp(err, want, strlen(want)) == 0, "'%s': got '%s', want '%s ...'", text, err, want);
    CHECK(strstr(err, what) != NULL, "'%s': got '%s', want it to mention '%s'", text, err, what);
    plm_layout_free(L);
}

static void test_errors(void)
{
    expect_error("pointer(ijk,32).pointr(ijk,16).dense(ijk,8).place(a)", "pointr",
                 "unknown node kind 'pointr'");
    expect_error("dense(ijk,6).place(a)", "6", "not a power of two");
    expect_error("dense(ijx,8).place(a)", "x,", "unknown axis 'x'");
    expect_error("dense(iji,8).place(a)", "i,8", "given twice");
    expect_error("dense(ijk,8)", NULL, "must end with .place");
    expect_error("dense(ijk,8); dense(i,2).place(a)", ";", "must end with .place");
    expect_error("dynamic(ij,8).place(a)", "dynamic", "exactly one axis");
    expect_error("dense(i,8).dynamic(j,8).dense(k,2).place(a)", "dense(k", "dynamic must be the last");
    expect_error("dense(ijk,8).place(a, a)", "a)", "placed twice");
    expect_error("dense(i,8).place(a); dense(i,8).place(a)", "a)", "placed twice");
    expect_error("dense(ijk,8).place(a:f64)", "f64", "unknown field type 'f64'");
    expect_error("dense(ij,8,8,8).place(a)", "8)", "too many sizes");
    expect_error("pointer(ijk,1024).dense(ijk,2).place(a)", "pointer", "cells");
    expect_error("dense(i,65536).dense(i,65536).place(a)", "dense(i,65536).dense", "spans 2^32");
    expect_error("dense(ijk,8).place(a) x", "x", "expected ';'");
    expect_error("offset(1,2).dense(8).place(a)", ").dense", "offset takes 1 or 3 values");
    expect_error("dense(i,8).offset(3).place(a)", "offset", "offset must come first");
    expect_error("", NULL, "expected a node");
    expect_error("dense(ijk,8).place()", ")", "expected a field name");
    expect_error("dense(ijk 8).place(a)", "8)", "expected ','");
    expect_error("place(a)", "place", "needs a node");
    expect_error("offset(2147483000).dense(i,1024).place(a)", "dense", "32-bit index range");
}

int main(void)
{
    test_default();
    test_fields();
    test_errors();
    return TEST_RESULT();
}
