/* ir_field_info_from_layout on the default volume layout and a few others: kinds, sizes and
 * dimension as the layout text says; runtime SNode ids forming the leaf's chain; errors. */
#include "tests/check.h"
#include "engine/passes/passes.h"

static plm_layout *parse(const char *text)
{
    plm_layout *l = NULL;
    char err[256];
    if (plm_layout_parse(text, &l, err, sizeof err) != 0)
        fprintf(stderr, "layout '%s': %s\n", text, err);
    return l;
}

/* levels[l].rt_snode is the parent of levels[l+1].rt_snode, the last is the field's leaf */
static void check_chain(const plm_layout *L, int f, const ir_field_info *fi)
{
    CHECK_EQ(fi->levels[0].rt_snode, 0);
    CHECK_EQ(fi->levels[fi->nlevels - 1].rt_snode, L->cfg.fields[f].snode);
    for (int l = 1; l < fi->nlevels; l++)
        CHECK_EQ(L->cfg.snodes[fi->levels[l].rt_snode].parent, fi->levels[l - 1].rt_snode);
}

static void test_default(void)
{
    plm_layout *L = parse(PLM_LAYOUT_DEFAULT ".place(density, vel:vec3)");
    CHECK(L != NULL);
    if (!L)
        return;
    ir_field_info fi;
    char err[256];
    CHECK_EQ(ir_field_info_from_layout(L, 1, &fi, err, sizeof err), 0);
    CHECK(strcmp(fi.name, "vel") == 0);
    CHECK_EQ(fi.elem, IR_F32);
    CHECK_EQ(fi.components, 3);
    CHECK_EQ(fi.dim, 3);
    CHECK_EQ(fi.nlevels, 4);
    const int kinds[] = {IR_KIND_ROOT, IR_KIND_POINTER, IR_KIND_POINTER, IR_KIND_DENSE};
    const int log2[] = {0, 5, 4, 3};
    for (int l = 0; l < 4; l++) {
        CHECK_EQ(fi.levels[l].kind, kinds[l]);
        for (int a = 0; a < 3; a++)
            CHECK_EQ(fi.levels[l].log2_size[a], log2[l]);
    }
    check_chain(L, 1, &fi);
    CHECK_EQ(ir_field_info_from_layout(L, 0, &fi, err, sizeof err), 0);
    CHECK_EQ(fi.components, 1);
    CHECK(strcmp(fi.name, "density") == 0);
    plm_layout_free(L);
}

static void test_others(void)
{
    ir_field_info fi;
    char err[256];
    /* 2-D, one level, vec3 */
    plm_layout *L = parse("dense(ij,64).place(a:vec3)");
    CHECK(L != NULL);
    if (L) {
        CHECK_EQ(ir_field_info_from_layout(L, 0, &fi, err, sizeof err), 0);
        CHECK_EQ(fi.dim, 2);
        CHECK_EQ(fi.nlevels, 2);
        CHECK_EQ(fi.levels[1].kind, IR_KIND_DENSE);
        CHECK_EQ(fi.levels[1].log2_size[0], 6);
        CHECK_EQ(fi.levels[1].log2_size[1], 6);
        CHECK_EQ(fi.levels[1].log2_size[2], 0);
        check_chain(L, 0, &fi);
        plm_layout_free(L);
    }
    /* 1-D with different sizes per level; bitmasked */
    L = parse("pointer(i,16).bitmasked(i,32).place(b)");
    CHECK(L != NULL);
    if (L) {
        CHECK_EQ(ir_field_info_from_layout(L, 0, &fi, err, sizeof err), 0);
        CHECK_EQ(fi.dim, 1);
        CHECK_EQ(fi.nlevels, 3);
        CHECK_EQ(fi.levels[1].kind, IR_KIND_POINTER);
        CHECK_EQ(fi.levels[1].log2_size[0], 4);
        CHECK_EQ(fi.levels[2].kind, IR_KIND_BITMASKED);
        CHECK_EQ(fi.levels[2].log2_size[0], 5);
        check_chain(L, 0, &fi);
        plm_layout_free(L);
    }
    /* two chains: the second field's ids are not the first chain's */
    L = parse("dense(ijk,4).place(u); pointer(ijk,8).dense(ijk,4).place(v)");
    CHECK(L != NULL);
    if (L) {
        ir_field_info fu, fv;
        CHECK_EQ(ir_field_info_from_layout(L, 0, &fu, err, sizeof err), 0);
        CHECK_EQ(ir_field_info_from_layout(L, 1, &fv, err, sizeof err), 0);
        CHECK_EQ(fu.nlevels, 2);
        CHECK_EQ(fv.nlevels, 3);
        CHECK(fu.levels[1].rt_snode != fv.levels[1].rt_snode);
        CHECK(fu.levels[1].rt_snode != fv.levels[2].rt_snode);
        CHECK_EQ(fv.levels[1].kind, IR_KIND_POINTER);
        CHECK_EQ(fv.levels[2].log2_size[2], 2);
        check_chain(L, 0, &fu);
        check_chain(L, 1, &fv);
        /* errors name the problem */
        err[0] = 0;
        CHECK_EQ(ir_field_info_from_layout(L, 2, &fu, err, sizeof err), -1);
        CHECK(strstr(err, "field 2") != NULL);
        CHECK_EQ(ir_field_info_from_layout(L, -1, &fu, err, sizeof err), -1);
        CHECK_EQ(ir_field_info_from_layout(NULL, 0, &fu, err, sizeof err), -1);
        plm_layout_free(L);
    }
}

int main(void)
{
    test_default();
    test_others();
    CHECK_DONE();
}
