/* Visiting the active cells of one SNode without a list (walk.h). */
#include "sparse/walk.h"

#include "sparse/runtime/rt_internal.h"

typedef struct walk {
    plm_runtime *rt;
    int32_t path[PLM_RT_MAX_SNODES]; /* root .. target */
    int depth;                       /* index of the target in path */
    plm_rt_walk_fn fn;
    void *user;
} walk;

static int visit(walk *w, int level, const plm_rt_elem *pe);

/* The active cells of path[level] inside the cell pe of its parent. */
static int children(walk *w, int level, const plm_rt_elem *pe)
{
    const plm_rt_snode *s = &w->rt->snodes[w->path[level]];
    uint8_t *c = pe->cell + s->offset_in_parent;
    int32_t base[3];
    for (int a = 0; a < 3; a++)
        base[a] = pe->coord[a] + (s->parent == 0 ? s->coord_offset[a] : 0);
    plm_rt_elem e;
    if (s->kind == PLM_RT_DYNAMIC) {
        const rt_dyn_header *h = (const rt_dyn_header *)c;
        int32_t per = 1 << s->dyn_log2_chunk;
        uint8_t *chunk = h->head;
        for (int32_t i = 0; i < h->n && chunk; i++) {
            if (i > 0 && (i & (per - 1)) == 0 && !(chunk = *(uint8_t **)chunk))
                break; /* a chunk that could not be made: its cells were never there */
            rt_list_entry(&e, s, base, chunk + 8 + (uint64_t)(i & (per - 1)) * s->cell_bytes, i);
            int r = visit(w, level, &e);
            if (r)
                return r;
        }
        return 0;
    }
    for (int32_t i = 0; i < s->num_cells; i++) {
        uint8_t *cell = rt_active_cell(s, c, i);
        if (!cell)
            continue;
        rt_list_entry(&e, s, base, cell, i);
        int r = visit(w, level, &e);
        if (r)
            return r;
    }
    return 0;
}

/* pe is an entry of path[level]: the target's, or a parent to descend from. */
static int visit(walk *w, int level, const plm_rt_elem *pe)
{
    if (level == w->depth)
        return w->fn(w->user, pe);
    return children(w, level + 1, pe);
}

int plm_rt_walk(plm_runtime *rt, int32_t snode, plm_rt_walk_fn fn, void *user)
{
    if (snode < 0 || snode >= rt->num_snodes)
        return -1;
    walk w = {rt, {0}, 0, fn, user};
    int n = 0;
    for (int32_t s = snode; s > 0; s = rt->snodes[s].parent)
        n++;
    w.depth = n;
    for (int32_t s = snode, k = n; k >= 0; s = rt->snodes[s].parent, k--)
        w.path[k] = s;
    plm_rt_elem root = {rt->root, {0, 0, 0}, 0};
    return visit(&w, 0, &root);
}
