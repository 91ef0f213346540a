/* Each SNode type against a dense reference model under random operation sequences.
 *
 * The model knows each level's kind and per-axis sizes as written in the test (not from the
 * parser) and keeps, per level, a dense array of cell activity (pointer, bitmasked), per dynamic
 * container its length, and every voxel's value. Cell coordinates are plain divisions by the
 * sizes below, independent of the runtime's bit tricks. Semantics modelled:
 *  - writing a voxel activates every cell on its path (dynamic: length grows to cover it);
 *  - reading an inactive voxel gives the background and allocates nothing;
 *  - deactivating a pointer or bitmasked cell resets everything below it (values to background,
 *    sparse cells inactive, dynamic lengths 0); a dynamic deactivation truncates the list there;
 *    deactivating a dense cell does nothing;
 *  - gc prunes pointer cells whose content is only empty sparse containers. */
#include <stdlib.h>
#include <string.h>

#include "sparse/tree.h"
#include "test_util.h"

#define MAXL 6
/* GCC 12 at -O2 reports impossible level indices in loops bounded by m->nl (<= MAXL). */
#pragma GCC diagnostic ignored "-Warray-bounds"

typedef struct level {
    int kind;
    int size[3];
} level;

typedef struct model {
    const char *text;
    int nl;
    level lv[MAXL];
    int off[3];
    int nfields;
    int comps[4];
    float bg[4][3];
    /* derived */
    int ext[3];
    int below[MAXL][3]; /* voxels per cell of level l along each axis */
    int ncells[MAXL];
    uint8_t *active[MAXL];
    int *dyn_n; /* per container of the dynamic (last) level */
    int dyn_axis;
    int nvox;
    float *val[4]; /* nvox * 3 */
    /* runtime side */
    plm_tree *t;
    int first_snode; /* SNode id of level 0 */
    int field_id[4];
} model;

static int vox_index(const model *m, const int v[3])
{
    return (v[0] * m->ext[1] + v[1]) * m->ext[2] + v[2];
}

static int cell_index(const model *m, int l, const int v[3])
{
    if (l < 0 || l >= MAXL)
        return 0;
    int c[3], n[3];
    for (int a = 0; a < 3; a++) {
        c[a] = v[a] / m->below[l][a];
        n[a] = m->ext[a] / m->below[l][a];
    }
    return (c[0] * n[1] + c[1]) * n[2] + c[2];
}

static void model_init(model *m)
{
    for (int a = 0; a < 3; a++) {
        m->ext[a] = 1;
        for (int l = 0; l < m->nl; l++)
            m->ext[a] *= m->lv[l].size[a] ? m->lv[l].size[a] : 1;
    }
    for (int l = 0; l < m->nl; l++) {
        m->ncells[l] = 1;
        for (int a = 0; a < 3; a++) {
            int b = 1;
            for (int k = l + 1; k < m->nl; k++)
                b *= m->lv[k].size[a] ? m->lv[k].size[a] : 1;
            m->below[l][a] = b;
            m->ncells[l] *= m->ext[a] / b;
        }
        m->active[l] = calloc((size_t)m->ncells[l], 1);
    }
    m->dyn_axis = -1;
    if (m->lv[m->nl - 1].kind == PLM_RT_DYNAMIC) {
        m->dyn_n = calloc((size_t)(m->nl > 1 ? m->ncells[m->nl - 2] : 1), sizeof(int));
        for (int a = 0; a < 3; a++)
            if (m->lv[m->nl - 1].size[a] > 1)
                m->dyn_axis = a;
    }
    m->nvox = m->ext[0] * m->ext[1] * m->ext[2];
    for (int f = 0; f < m->nfields; f++) {
        m->val[f] = malloc(sizeof(float) * 3 * (size_t)m->nvox);
        for (int i = 0; i < m->nvox; i++)
            for (int k = 0; k < 3; k++)
                m->val[f][3 * i + k] = m->bg[f][k];
    }
}

static void model_free(model *m)
{
    for (int l = 0; l < m->nl; l++)
        free(m->active[l]);
    free(m->dyn_n);
    for (int f = 0; f < m->nfields; f++)
        free(m->val[f]);
}

/* Is the cell of level l holding voxel v active (with all its ancestors)? */
static int present(const model *m, int l, const int v[3])
{
    for (int k = 0; k <= l; k++) {
        int kind = m->lv[k].kind;
        if ((kind == PLM_RT_POINTER || kind == PLM_RT_BITMASKED) && !m->active[k][cell_index(m, k, v)])
            return 0;
        if (kind == PLM_RT_DYNAMIC &&
            v[m->dyn_axis] % m->lv[k].size[m->dyn_axis] >= m->dyn_n[cell_index(m, k - 1, v)])
            return 0;
    }
    return 1;
}

/* Same cell of level l (l = -1: the whole domain)? */
static int same_cell(const model *m, int l, const int v[3], const int w[3])
{
    if (l < 0)
        return 1;
    for (int a = 0; a < 3; a++)
        if (v[a] / m->below[l][a] != w[a] / m->below[l][a])
            return 0;
    return 1;
}

static void for_each_voxel(const model *m, int v[3], int *i)
{
    v[2] = *i % m->ext[2];
    v[1] = (*i / m->ext[2]) % m->ext[1];
    v[0] = *i / (m->ext[1] * m->ext[2]);
}

/* Resets the subtree below cell (l, v): values to background, sparse cells below inactive. */
static void reset_below(model *m, int l, const int v[3])
{
    for (int i = 0; i < m->nvox; i++) {
        int w[3];
        for_each_voxel(m, w, &i);
        if (!same_cell(m, l, v, w))
            continue;
        for (int f = 0; f < m->nfields; f++)
            for (int k = 0; k < 3; k++)
                m->val[f][3 * i + k] = m->bg[f][k];
        for (int k = l + 1; k < m->nl; k++) {
            if (m->lv[k].kind == PLM_RT_POINTER || m->lv[k].kind == PLM_RT_BITMASKED)
                m->active[k][cell_index(m, k, w)] = 0;
            if (m->lv[k].kind == PLM_RT_DYNAMIC)
                m->dyn_n[cell_index(m, k - 1, w)] = 0;
        }
    }
}

static void model_write(model *m, const int v[3], int f, const float *value)
{
    for (int l = 0; l < m->nl; l++) {
        if (m->lv[l].kind == PLM_RT_POINTER || m->lv[l].kind == PLM_RT_BITMASKED)
            m->active[l][cell_index(m, l, v)] = 1;
        if (m->lv[l].kind == PLM_RT_DYNAMIC) {
            int *n = &m->dyn_n[cell_index(m, l - 1, v)];
            int idx = v[m->dyn_axis] % m->lv[l].size[m->dyn_axis];
            if (*n < idx + 1)
                *n = idx + 1;
        }
    }
    for (int k = 0; k < m->comps[f]; k++)
        m->val[f][3 * vox_index(m, v) + k] = value[k];
}

static void model_deactivate(model *m, int l, const int v[3])
{
    if (l > 0 && !present(m, l - 1, v))
        return; /* no container: nothing to do */
    int kind = m->lv[l].kind;
    if (kind == PLM_RT_POINTER || kind == PLM_RT_BITMASKED) {
        int c = cell_index(m, l, v);
        if (m->active[l][c]) {
            m->active[l][c] = 0;
            reset_below(m, l, v);
        }
    } else if (kind == PLM_RT_DYNAMIC) {
        int *n = &m->dyn_n[cell_index(m, l - 1, v)];
        int idx = v[m->dyn_axis] % m->lv[l].size[m->dyn_axis];
        if (idx < *n) {
            for (int i = 0; i < m->nvox; i++) {
                int w[3];
                for_each_voxel(m, w, &i);
                if (same_cell(m, l - 1, v, w) &&
                    w[m->dyn_axis] % m->lv[l].size[m->dyn_axis] >= idx)
                    for (int f = 0; f < m->nfields; f++)
                        for (int k = 0; k < 3; k++)
                            m->val[f][3 * i + k] = m->bg[f][k];
            }
            *n = idx;
        }
    }
}

/* Does the content of active cell (l, v) hold nothing active (gc prunes it if l is pointer)? */
static int content_empty(const model *m, int l, const int v[3])
{
    if (l == m->nl - 1)
        return 0;
    int kind = m->lv[l + 1].kind;
    if (kind == PLM_RT_DYNAMIC)
        return m->dyn_n[cell_index(m, l, v)] == 0;
    for (int i = 0; i < m->nvox; i++) {
        int w[3];
        for_each_voxel(m, w, &i);
        if (!same_cell(m, l, v, w))
            continue;
        if (kind == PLM_RT_DENSE) {
            if (!content_empty(m, l + 1, w))
                return 0;
        } else if (m->active[l + 1][cell_index(m, l + 1, w)]) {
            return 0;
        }
    }
    return 1;
}

static void model_prune(model *m)
{
    for (int l = m->nl - 2; l >= 0; l--) {
        if (m->lv[l].kind != PLM_RT_POINTER)
            continue;
        for (int i = 0; i < m->nvox; i++) {
            int w[3];
            for_each_voxel(m, w, &i);
            if (present(m, l, w) && content_empty(m, l, w))
                m->active[l][cell_index(m, l, w)] = 0;
        }
    }
}

static void user_coords(const model *m, const int v[3], int32_t u[3])
{
    for (int a = 0; a < 3; a++)
        u[a] = v[a] + m->off[a];
}

static void random_voxel(const model *m, rng *r, int v[3])
{
    for (int a = 0; a < 3; a++)
        v[a] = (int)rng_below(r, (uint32_t)m->ext[a]);
}

static void compare_all(model *m, const char *when)
{
    plm_tree_stats before, after;
    plm_tree_stats_get(m->t, &before);
    for (int i = 0; i < m->nvox; i++) {
        int v[3];
        int32_t u[3];
        for_each_voxel(m, v, &i);
        user_coords(m, v, u);
        int want_active = present(m, m->nl - 1, v);
        for (int f = 0; f < m->nfields; f++) {
            float got[3] = {0, 0, 0};
            int act = plm_tree_read(m->t, m->field_id[f], u[0], u[1], u[2], got);
            CHECK(act == want_active, "%s: %s: voxel (%d,%d,%d) active %d want %d", m->text,
                  when, u[0], u[1], u[2], act, want_active);
            for (int k = 0; k < m->comps[f]; k++)
                CHECK(got[k] == m->val[f][3 * i + k], "%s: %s: voxel (%d,%d,%d) field %d[%d] = %g want %g",
                      m->text, when, u[0], u[1], u[2], f, k, got[k], m->val[f][3 * i + k]);
        }
        for (int l = 0; l < m->nl; l++) {
            int got = plm_tree_is_active(m->t, m->first_snode + l, u[0], u[1], u[2]);
            CHECK(got == present(m, l, v), "%s: %s: level %d at (%d,%d,%d) active %d want %d",
                  m->text, when, l, u[0], u[1], u[2], got, present(m, l, v));
        }
    }
    plm_tree_stats_get(m->t, &after);
    CHECK(after.bytes_in_use == before.bytes_in_use, "%s: reads allocated %llu bytes", m->text,
          (unsigned long long)(after.bytes_in_use - before.bytes_in_use));
}

/* The lists a GPU makes: level by level from the parent's list, one call per cell
 * (plm_rt_listgen_cell), here in reverse order since a GPU's order is any; dynamic levels by
 * work items, as the GPU executor does. Returns the size of list(sn). */
static int64_t listgen_by_cell(model *m, int sn)
{
    plm_runtime *rt = plm_tree_runtime(m->t);
    if (rt->snodes[sn].kind == PLM_RT_DYNAMIC)
        return plm_tree_listgen(m->t, sn, 1);
    if (rt->snodes[sn].parent == 0)
        plm_rt_listgen_root(rt);
    plm_rt_list_clear(rt, sn);
    for (int64_t i = plm_rt_listgen_num_cells(rt, sn) - 1; i >= 0; i--)
        plm_rt_listgen_cell(rt, sn, i);
    return plm_rt_list_size(rt, sn);
}

/* Lists every level and checks the listed cells are exactly the active ones. by_cell: the
 * lists are made one cell at a time (listgen_by_cell), else by plm_tree_listgen's items. */
static void compare_lists(model *m, int nthreads, int by_cell)
{
    plm_runtime *rt = plm_tree_runtime(m->t);
    for (int l = 0; l < m->nl; l++) {
        int sn = m->first_snode + l;
        int64_t n = by_cell ? listgen_by_cell(m, sn) : plm_tree_listgen(m->t, sn, nthreads);
        uint8_t *seen = calloc((size_t)m->ncells[l], 1);
        int64_t want = 0;
        for (int i = 0; i < m->nvox; i++) {
            int v[3];
            for_each_voxel(m, v, &i);
            int c = cell_index(m, l, v);
            if (!seen[c] && present(m, l, v)) {
                seen[c] = 1;
                want++;
            }
        }
        CHECK(n == want, "%s: level %d lists %lld cells, want %lld", m->text, l, (long long)n,
              (long long)want);
        for (int64_t e = 0; e < n && e < want; e++) {
            const plm_rt_elem *el = plm_rt_list_get(rt, sn, (int32_t)e);
            int v[3], ok = 1;
            for (int a = 0; a < 3; a++) {
                v[a] = el->coord[a] - m->off[a];
                if (v[a] < 0 || v[a] >= m->ext[a] || v[a] % m->below[l][a])
                    ok = 0;
            }
            CHECK(ok, "%s: level %d element %lld has coords (%d,%d,%d), not a cell origin",
                  m->text, l, (long long)e, el->coord[0], el->coord[1], el->coord[2]);
            if (!ok)
                continue;
            int c = cell_index(m, l, v);
            CHECK(seen[c] == 1, "%s: level %d lists cell (%d,%d,%d) twice or inactive", m->text,
                  l, el->coord[0], el->coord[1], el->coord[2]);
            seen[c] = 2;
            /* For leaves stored cell by cell, the listed cell holds the values. */
            const plm_rt_snode *s = &rt->snodes[sn];
            if (s->is_leaf && !s->soa && seen[c] == 2)
                for (int f = 0; f < m->nfields; f++) {
                    const float *p = (const float *)(el->cell + rt->fields[m->field_id[f]].offset);
                    CHECK(p[0] == m->val[f][3 * vox_index(m, v)], "%s: listed cell value", m->text);
                }
        }
        free(seen);
    }
}

static void run_model(model *m, uint64_t seed, int ops)
{
    model_init(m);
    char err[256];
    int rc = plm_tree_create(m->text, 64u << 20, &m->t, err, sizeof err);
    CHECK(rc == 0, "create '%s': %s", m->text, err);
    if (rc != 0) {
        model_free(m);
        return;
    }
    const plm_layout *L = plm_tree_layout(m->t);
    static const char *names[4] = {"a", "v", "b", "c"};
    for (int f = 0; f < m->nfields; f++) {
        m->field_id[f] = plm_tree_field(m->t, names[f]);
        CHECK(m->field_id[f] >= 0, "field %s", names[f]);
        CHECK(plm_tree_field_components(m->t, m->field_id[f]) == m->comps[f], "components");
        plm_tree_set_background(m->t, m->field_id[f], m->bg[f]);
        m->first_snode = L->cfg.fields[m->field_id[f]].snode - (m->nl - 1);
    }
    plm_runtime *rt = plm_tree_runtime(m->t);
    for (int l = 0; l < m->nl; l++) {
        int want = m->lv[l].size[0] * m->lv[l].size[1] * m->lv[l].size[2];
        CHECK(plm_rt_get_num_elements(rt, m->first_snode + l, NULL) == want,
              "%s: level %d capacity", m->text, l);
    }
    rng r = {seed};
    for (int op = 0; op < ops; op++) {
        int v[3];
        int32_t u[3];
        random_voxel(m, &r, v);
        user_coords(m, v, u);
        uint32_t what = rng_below(&r, 100);
        if (what < 55) {
            int f = (int)rng_below(&r, (uint32_t)m->nfields);
            float val[3];
            for (int k = 0; k < 3; k++)
                val[k] = (float)rng_below(&r, 2000) * 0.25f - 100.0f;
            plm_tree_write(m->t, m->field_id[f], u[0], u[1], u[2], val);
            model_write(m, v, f, val);
        } else if (what < 80) {
            int l = (int)rng_below(&r, (uint32_t)m->nl);
            plm_tree_deactivate(m->t, m->first_snode + l, u[0], u[1], u[2]);
            model_deactivate(m, l, v);
        } else if (what < 97) {
            int f = (int)rng_below(&r, (uint32_t)m->nfields);
            float got[3];
            int act = plm_tree_read(m->t, m->field_id[f], u[0], u[1], u[2], got);
            CHECK(act == present(m, m->nl - 1, v), "%s: op %d read activity", m->text, op);
            for (int k = 0; k < m->comps[f]; k++)
                CHECK(got[k] == m->val[f][3 * vox_index(m, v) + k], "%s: op %d read", m->text, op);
        } else if (what < 99) {
            plm_tree_gc(m->t);
            model_prune(m);
        } else {
            compare_lists(m, 1 + (int)rng_below(&r, 2), (int)rng_below(&r, 2));
        }
        if (op % 500 == 499)
            compare_all(m, "periodic");
    }
    compare_all(m, "end");
    compare_lists(m, 2, 0);
    compare_lists(m, 1, 1);
    char msg[256];
    CHECK(plm_tree_check_error(m->t, msg, sizeof msg) == 0, "%s: runtime error %s", m->text, msg);
    /* Deactivating every top cell and collecting leaves nothing allocated. */
    for (int i = 0; i < m->nvox; i++) {
        int v[3];
        int32_t u[3];
        for_each_voxel(m, v, &i);
        user_coords(m, v, u);
        plm_tree_deactivate(m->t, m->first_snode, u[0], u[1], u[2]);
        if (m->nl > 1)
            plm_tree_deactivate(m->t, m->first_snode + 1, u[0], u[1], u[2]);
    }
    plm_tree_gc(m->t);
    plm_tree_stats st;
    plm_tree_stats_get(m->t, &st);
    for (int l = 0; l < m->nl; l++) {
        int k = m->lv[l].kind;
        if (k == PLM_RT_POINTER || k == PLM_RT_DYNAMIC)
            CHECK(st.snode[m->first_snode + l].live_cells == 0 &&
                      st.snode[m->first_snode + l].recycled_cells == 0,
                  "%s: level %d keeps %lld cells after clearing", m->text, l,
                  (long long)st.snode[m->first_snode + l].live_cells);
    }
    plm_tree_destroy(m->t);
    model_free(m);
}

#define L3(k, a, b, c) {k, {a, b, c}}

int main(void)
{
    enum { D = PLM_RT_DENSE, P = PLM_RT_POINTER, B = PLM_RT_BITMASKED, Y = PLM_RT_DYNAMIC };
    model models[] = {
        /* dense only: always active; values start at 0 (set before the first background). */
        {.text = "dense(ij,4,2).dense(ij,2,8).place(a)", .nl = 2,
         .lv = {L3(D, 4, 2, 1), L3(D, 2, 8, 1)}, .nfields = 1, .comps = {1}},
        /* pointer over pointer over dense blocks, SoA scalar + vec3, negative offset. */
        {.text = "offset(-9,4,-3).pointer(ijk,4,2,2).pointer(ijk,2).dense(ijk,2,4,2).place(a, v:vec3)",
         .nl = 3, .lv = {L3(P, 4, 2, 2), L3(P, 2, 2, 2), L3(D, 2, 4, 2)}, .off = {-9, 4, -3},
         .nfields = 2, .comps = {1, 3}, .bg = {{1.5f}, {-1.0f, 2.0f, 0.5f}}},
        /* bitmasked leaf, array of structs. */
        {.text = "pointer(ij,4).bitmasked(ij,2,4).place_aos(a, v:vec3)", .nl = 2,
         .lv = {L3(P, 4, 4, 1), L3(B, 2, 4, 1)}, .nfields = 2, .comps = {1, 3},
         .bg = {{-7.0f}, {0.0f, 3.0f, 0.0f}}},
        /* bitmasked above pointer: resetting a bitmasked cell frees the blocks below. */
        {.text = "bitmasked(ijk,2).pointer(ijk,2).dense(ijk,4).place(a)", .nl = 3,
         .lv = {L3(B, 2, 2, 2), L3(P, 2, 2, 2), L3(D, 4, 4, 4)}, .nfields = 1, .comps = {1},
         .bg = {{0.25f}}},
        /* dynamic lists under a dense array. */
        {.text = "dense(i,8).dynamic(j,128).place(a)", .nl = 2,
         .lv = {L3(D, 8, 1, 1), L3(Y, 1, 128, 1)}, .nfields = 1, .comps = {1}, .bg = {{9.0f}}},
        /* dynamic under pointer and dense, several fields AoS. */
        {.text = "pointer(i,4).dense(i,2).dynamic(k,256).place_aos(a, v:vec3)", .nl = 3,
         .lv = {L3(P, 4, 1, 1), L3(D, 2, 1, 1), L3(Y, 1, 1, 256)}, .nfields = 2,
         .comps = {1, 3}, .bg = {{2.0f}, {1.0f, 1.0f, 1.0f}}},
        /* pointer leaf: voxels allocated one by one. */
        {.text = "offset(-16).dense(ij,4).pointer(ij,4).place(a, v:vec3)", .nl = 2,
         .lv = {L3(D, 4, 4, 1), L3(P, 4, 4, 1)}, .off = {-16, -16, -16}, .nfields = 2,
         .comps = {1, 3}, .bg = {{-2.0f}, {0.5f, 0.5f, 0.5f}}},
    };
    int n = (int)(sizeof models / sizeof models[0]);
    for (int i = 0; i < n; i++)
        run_model(&models[i], 0x1234567ull + (uint64_t)i * 7919u, 4000);

    /* Two chains under one root: each behaves as its own tree. */
    model a = {.text = "pointer(i,4).dense(i,4).place(a); offset(-8).bitmasked(i,16).place(b)",
               .nl = 2, .lv = {L3(P, 4, 1, 1), L3(D, 4, 1, 1)}, .nfields = 1, .comps = {1},
               .bg = {{3.0f}}};
    run_model(&a, 99, 3000);
    return TEST_RESULT();
}
