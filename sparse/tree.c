/* Host-side tree: arena reservation, the runtime's calls wrapped with argument checks, and list
 * generation spread over threads. */
#define _GNU_SOURCE
#include "sparse/tree.h"
#include "sparse/walk.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

/* Where the arena starts taking huge pages (see plm_tree_create). */
#define SMALL_PAGES_BYTES ((size_t)64 << 20)

struct plm_tree {
    plm_layout *layout;
    plm_runtime *rt;
    void *arena;
    size_t arena_map_bytes;
    uint64_t budget;
    int external; /* the arena belongs to the caller (plm_tree_create_in) */
    size_t color; /* where the runtime starts inside the mapping (0 for external arenas) */
    uint32_t *error_flag; /* the runtime's error_flag, kept here so a poll reads host memory */
    int cut;      /* the process's address-space limit made the arena smaller than asked */
};

static int tree_create(const char *layout, uint64_t budget_bytes, void *arena, plm_tree **out,
                       char *err, size_t errlen);

int plm_tree_create(const char *layout, uint64_t budget_bytes, plm_tree **out, char *err,
                    size_t errlen)
{
    return tree_create(layout, budget_bytes, NULL, out, err, errlen);
}

int plm_tree_create_in(const char *layout, void *arena, uint64_t arena_bytes, plm_tree **out,
                       char *err, size_t errlen)
{
    if (!arena) {
        if (err && errlen)
            snprintf(err, errlen, "plm_tree_create_in: arena is NULL");
        if (out)
            *out = NULL;
        return -1;
    }
    return tree_create(layout, arena_bytes, arena, out, err, errlen);
}

static int tree_create(const char *layout, uint64_t budget_bytes, void *arena, plm_tree **out,
                       char *err, size_t errlen)
{
    char dummy[8];
    if (!err || errlen == 0)
        err = dummy, errlen = sizeof dummy;
    err[0] = 0;
    *out = NULL;
    plm_tree *t = calloc(1, sizeof *t);
    if (!t) {
        snprintf(err, errlen, "out of host memory creating a tree");
        return -1;
    }
    char perr[256];
    if (plm_layout_parse(layout, &t->layout, perr, sizeof perr) != 0) {
        snprintf(err, errlen, "layout: %s", perr);
        free(t);
        return -1;
    }
    size_t page = 4096;
    t->budget = budget_bytes;
    if (arena) {
        t->external = 1;
        t->arena = arena;
        t->arena_map_bytes = (size_t)budget_bytes;
        goto init;
    }
    /* One page more than the budget: the runtime starts `color` bytes into the mapping. Trees
     * with the same layout and budget otherwise put their k-th block at the same offset from a
     * page-aligned start, so a kernel reading block k of several fields hits the same L1 sets
     * (and 4 KiB store/load aliasing) in every stream; successive trees start 320 bytes apart
     * (12 distinct positions in a page, all 64-byte aligned as the runtime needs). */
    static _Atomic unsigned trees_made;
    size_t color = (size_t)(trees_made++ % 12u) * 320u;
    /* A limit on the address space (ulimit -v, a farm's h_vmem) counts reservations that are
     * never touched: under one, a tree reserves at most a 32nd of what the limit leaves beyond
     * a quarter of it (at least 256 MiB) kept for everything else (a scene has tens of trees;
     * each takes a share of the rest, so the early ones cannot starve the later ones), and
     * halves that while the system refuses, down to 16 MiB. Its arena, and so what it can
     * hold, is then smaller than the budget, which its budget errors say. Without a limit the
     * reservation is the budget or nothing. */
    uint64_t want = budget_bytes;
    struct rlimit as;
    uint64_t limit = 0, in_use = 0;
    if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) {
        limit = (uint64_t)as.rlim_cur;
        FILE *statm = fopen("/proc/self/statm", "r");
        unsigned long long pages = 0;
        if (statm && fscanf(statm, "%llu", &pages) == 1)
            in_use = (uint64_t)pages * (uint64_t)sysconf(_SC_PAGESIZE);
        if (statm)
            fclose(statm);
        uint64_t keep = limit / 4 > (256u << 20) ? limit / 4 : (256u << 20);
        uint64_t cap = in_use + keep < limit ? (limit - in_use - keep) / 32 : 0;
        cap = cap < (16u << 20) ? (16u << 20) : cap;
        if (want > cap)
            want = cap;
    }
    for (;;) {
        t->arena_map_bytes = (size_t)((want + page - 1) & ~(uint64_t)(page - 1)) + page;
        t->arena = mmap(NULL, t->arena_map_bytes, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (t->arena != MAP_FAILED || errno != ENOMEM || !limit || want <= (16u << 20))
            break;
        want /= 2;
    }
    if (want < budget_bytes) {
        t->cut = 1;
        budget_bytes = want;
        t->budget = want;
    }
    if (t->arena == MAP_FAILED) {
        int e = errno;
        if (limit)
            snprintf(err, errlen, "cannot reserve %llu bytes of address space for the tree: %s "
                     "(the process may use %llu bytes of address space, ulimit -v, and uses %llu; "
                     "Plume reserves address space for every field's tree)",
                     (unsigned long long)budget_bytes, strerror(e), (unsigned long long)limit,
                     (unsigned long long)in_use);
        else
            snprintf(err, errlen, "cannot reserve %llu bytes of address space for the tree: %s",
                     (unsigned long long)budget_bytes, strerror(e));
        plm_layout_free(t->layout);
        free(t);
        return -1;
    }
    /* Huge pages past the arena's first SMALL_PAGES_BYTES only (a hint: ignored where
     * unsupported). A small tree touches a few pages of each of its large sparse arrays (the
     * pointer levels' slot arrays, the first chunk of each list), and with huge pages each
     * such touch costs 2 MiB zeroed by the kernel: the default smoke scene (some 60 trees,
     * 34 MiB handed out in each) peaked at 600 MiB resident with huge pages everywhere and at
     * 157 MiB without, and ran 7% faster without. A tree that grows past that is being filled
     * block by block, front to back, where huge pages cost little memory and save most TLB
     * misses of random voxel access (plume-bench sparse, activate_512_cube: 500 MiB of blocks
     * scattered over the domain, 4.1 Mvox/s with huge pages there, 2.4 without). */
    if (t->arena_map_bytes > SMALL_PAGES_BYTES)
        madvise((uint8_t *)t->arena + SMALL_PAGES_BYTES, t->arena_map_bytes - SMALL_PAGES_BYTES,
                MADV_HUGEPAGE);
    t->color = color;
init:;
    uint64_t needed = 0;
    t->rt = plm_rt_init((uint8_t *)t->arena + t->color, budget_bytes, &t->layout->cfg, &needed);
    if (!t->rt) {
        snprintf(err, errlen,
                 "memory budget exceeded: the layout needs at least %llu bytes before any "
                 "voxel is active, budget %llu bytes",
                 (unsigned long long)needed, (unsigned long long)budget_bytes);
        plm_tree_destroy(t);
        return -1;
    }
    *out = t;
    return 0;
}

void plm_tree_destroy(plm_tree *t)
{
    if (!t)
        return;
    if (t->arena && t->arena != MAP_FAILED && !t->external)
        munmap(t->arena, t->arena_map_bytes);
    plm_layout_free(t->layout);
    free(t);
}

const plm_layout *plm_tree_layout(const plm_tree *t) { return t->layout; }
plm_runtime *plm_tree_runtime(plm_tree *t) { return t->rt; }
int plm_tree_field(const plm_tree *t, const char *name) { return plm_layout_field(t->layout, name); }

static int field_ok(const plm_tree *t, int field)
{
    return field >= 0 && field < t->rt->num_fields;
}

static int snode_ok(const plm_tree *t, int snode)
{
    return snode >= 0 && snode < t->rt->num_snodes;
}

int plm_tree_field_components(const plm_tree *t, int field)
{
    return field_ok(t, field) ? t->rt->fields[field].components : 0;
}

int plm_tree_set_background(plm_tree *t, int field, const float *value)
{
    if (!field_ok(t, field))
        return -1;
    plm_rt_field *f = &t->rt->fields[field];
    for (int k = 0; k < f->components; k++)
        f->background[k] = value[k];
    plm_rt_refill_background(t->rt, field);
    /* A chain of dense and bitmasked nodes only is allocated whole when the tree is made
     * (zero-filled), so no new container will take the background: its cells, written or not,
     * are set to it here (dense(ijk,16) with background 3 read 0 where nothing was written, and
     * bitmasked(ijk,16) activated cells at 0). Chains with a pointer or dynamic node fill each
     * container as it is allocated. */
    plm_rt_fill_field_inline(t->rt, field);
    return 0;
}

void plm_tree_background(const plm_tree *t, int field, float *value)
{
    if (!field_ok(t, field))
        return;
    const plm_rt_field *f = &t->rt->fields[field];
    for (int k = 0; k < f->components; k++)
        value[k] = f->background[k];
}

int plm_tree_read(plm_tree *t, int field, int32_t x, int32_t y, int32_t z, float *value)
{
    if (!field_ok(t, field))
        return -1;
    const plm_rt_field *f = &t->rt->fields[field];
    const float *p = (const float *)plm_rt_access(t->rt, field, x, y, z, 0);
    const float *src = p ? p : f->background;
    for (int k = 0; k < f->components; k++)
        value[k] = src[k];
    return p != NULL;
}

int plm_tree_write(plm_tree *t, int field, int32_t x, int32_t y, int32_t z, const float *value)
{
    if (!field_ok(t, field))
        return -1;
    float *p = (float *)plm_rt_access(t->rt, field, x, y, z, 1);
    for (int k = 0; k < t->rt->fields[field].components; k++)
        p[k] = value[k];
    return 0;
}

int plm_tree_is_active(plm_tree *t, int snode, int32_t x, int32_t y, int32_t z)
{
    return snode_ok(t, snode) ? plm_rt_is_active_at(t->rt, snode, x, y, z) : 0;
}

void plm_tree_activate(plm_tree *t, int snode, int32_t x, int32_t y, int32_t z)
{
    if (snode_ok(t, snode))
        plm_rt_activate_at(t->rt, snode, x, y, z);
}

void plm_tree_deactivate(plm_tree *t, int snode, int32_t x, int32_t y, int32_t z)
{
    if (snode_ok(t, snode))
        plm_rt_deactivate_at(t->rt, snode, x, y, z);
}

int plm_tree_block_shape(const plm_tree *t, int field, plm_block_shape *shape)
{
    if (!field_ok(t, field))
        return -1;
    const plm_rt_field *f = &t->rt->fields[field];
    const plm_rt_snode *leaf = &t->rt->snodes[f->snode];
    if (leaf->kind != PLM_RT_DENSE && leaf->kind != PLM_RT_BITMASKED)
        return -1;
    for (int a = 0; a < 3; a++)
        shape->dims[a] = 1 << leaf->axis_bits[a];
    shape->voxels = leaf->num_cells;
    shape->components = f->components;
    shape->stride = (int32_t)(f->stride / 4);
    shape->snode = leaf->parent;
    return 0;
}

/* The block's origin: the voxel's index with the leaf's own bits cleared. */
static void block_origin(const plm_rt_snode *leaf, int32_t x, int32_t y, int32_t z, int32_t o[3])
{
    int32_t v[3] = {x, y, z};
    for (int a = 0; a < 3; a++) {
        int64_t u = (int64_t)v[a] - leaf->coord_offset[a];
        u &= ~(((int64_t)1 << leaf->axis_bits[a]) - 1);
        o[a] = (int32_t)(u + leaf->coord_offset[a]);
    }
}

float *plm_tree_block(plm_tree *t, int field, int32_t x, int32_t y, int32_t z, int activate,
                      int32_t origin[3])
{
    plm_block_shape shape;
    if (plm_tree_block_shape(t, field, &shape) != 0)
        return NULL;
    const plm_rt_field *f = &t->rt->fields[field];
    const plm_rt_snode *leaf = &t->rt->snodes[f->snode];
    uint8_t *c = plm_rt_container_of(t->rt, f->snode, x, y, z, activate ? 1 : 0);
    if (!c)
        return NULL;
    if (origin)
        block_origin(leaf, x, y, z, origin);
    return (float *)(c + leaf->header_bytes + f->offset);
}

void plm_tree_clear(plm_tree *t, int field)
{
    if (field_ok(t, field))
        plm_rt_clear_chain(t->rt, field);
}

void plm_tree_deactivate_block(plm_tree *t, int field, int32_t x, int32_t y, int32_t z)
{
    if (!field_ok(t, field))
        return;
    int32_t parent = t->rt->snodes[t->rt->fields[field].snode].parent; /* any leaf kind */
    if (parent > 0)
        plm_rt_deactivate_at(t->rt, parent, x, y, z);
}

/* ---- list generation over threads ---- */

typedef struct listgen_job {
    plm_runtime *rt;
    int32_t snode;
    int32_t items;
    int32_t next; /* atomic */
} listgen_job;

static void *listgen_worker(void *arg)
{
    listgen_job *job = arg;
    /* Small batches when there are few items (the top levels), so every thread gets some. */
    const int32_t batch = job->items >= 1024 ? 16 : 1;
    for (;;) {
        int32_t i = __atomic_fetch_add(&job->next, batch, __ATOMIC_RELAXED);
        if (i >= job->items)
            break;
        int32_t end = i + batch < job->items ? i + batch : job->items;
        for (; i < end; i++)
            plm_rt_listgen_item(job->rt, job->snode, i);
    }
    return NULL;
}

static void listgen_level(plm_runtime *rt, int32_t snode, int nthreads)
{
    if (snode == 0) {
        plm_rt_listgen_root(rt);
        return;
    }
    plm_rt_list_clear(rt, snode);
    listgen_job job = {rt, snode, plm_rt_listgen_num_items(rt, snode), 0};
    if (nthreads > 64)
        nthreads = 64;
    if (nthreads <= 1 || job.items < 16) {
        listgen_worker(&job);
        return;
    }
    pthread_t th[64];
    int started = 0;
    for (int i = 0; i < nthreads - 1; i++)
        if (pthread_create(&th[started], NULL, listgen_worker, &job) == 0)
            started++;
    listgen_worker(&job);
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
}

int64_t plm_tree_listgen(plm_tree *t, int snode, int nthreads)
{
    if (!snode_ok(t, snode))
        return -1;
    int32_t path[PLM_RT_MAX_DEPTH + 1];
    int depth = 0;
    for (int32_t s = snode; s >= 0 && depth <= PLM_RT_MAX_DEPTH; s = t->rt->snodes[s].parent)
        path[depth++] = s;
    for (int d = depth - 1; d >= 0; d--) {
        listgen_level(t->rt, path[d], nthreads);
        if (plm_rt_error(t->rt) != PLM_RT_OK)
            return -1;
    }
    return plm_rt_list_size(t->rt, snode);
}

int64_t plm_tree_list_blocks(plm_tree *t, int field, int nthreads)
{
    plm_block_shape shape;
    if (plm_tree_block_shape(t, field, &shape) != 0)
        return -1;
    return plm_tree_listgen(t, shape.snode, nthreads);
}

int plm_tree_block_at(plm_tree *t, int field, int64_t i, int32_t origin[3], float **data)
{
    plm_block_shape shape;
    if (plm_tree_block_shape(t, field, &shape) != 0 || i < 0 ||
        i >= plm_rt_list_size(t->rt, shape.snode))
        return -1;
    const plm_rt_field *f = &t->rt->fields[field];
    const plm_rt_snode *leaf = &t->rt->snodes[f->snode];
    const plm_rt_elem *e = plm_rt_list_get(t->rt, shape.snode, (int32_t)i);
    for (int a = 0; a < 3; a++)
        origin[a] = e->coord[a] + (shape.snode == 0 ? leaf->coord_offset[a] : 0);
    *data = (float *)(e->cell + leaf->offset_in_parent + leaf->header_bytes + f->offset);
    return 0;
}

typedef struct block_walk {
    plm_tree *t;
    int field, top; /* top: the blocks are the root's own cell (coord_offset not yet added) */
    plm_block_fn fn;
    void *user;
} block_walk;

static int block_visit(void *user, const plm_rt_elem *e)
{
    block_walk *w = user;
    const plm_rt_field *f = &w->t->rt->fields[w->field];
    const plm_rt_snode *leaf = &w->t->rt->snodes[f->snode];
    int32_t origin[3];
    for (int a = 0; a < 3; a++)
        origin[a] = e->coord[a] + (w->top ? leaf->coord_offset[a] : 0);
    return w->fn(w->user, origin, (float *)(e->cell + leaf->offset_in_parent + leaf->header_bytes + f->offset));
}

static int container_visit(void *user, const plm_rt_elem *e)
{
    block_walk *w = user;
    const plm_rt_snode *leaf = &w->t->rt->snodes[w->t->rt->fields[w->field].snode];
    int32_t origin[3];
    for (int a = 0; a < 3; a++)
        origin[a] = e->coord[a] + (w->top ? leaf->coord_offset[a] : 0);
    return w->fn(w->user, origin, NULL);
}

int plm_tree_foreach_container(plm_tree *t, int field, plm_block_fn fn, void *user, int32_t dims[3])
{
    if (!field_ok(t, field))
        return -1;
    const plm_rt_snode *leaf = &t->rt->snodes[t->rt->fields[field].snode];
    for (int a = 0; a < 3; a++)
        dims[a] = 1 << leaf->axis_bits[a];
    block_walk w = {t, field, leaf->parent == 0, fn, user};
    return plm_rt_walk(t->rt, leaf->parent, container_visit, &w);
}

int plm_tree_foreach_block(plm_tree *t, int field, plm_block_fn fn, void *user)
{
    /* through the containers, not a list: a list needs arena memory, which after a budget
     * error is spent, and this is how hosts clear fields to recover from one (walk.h) */
    plm_block_shape shape;
    if (plm_tree_block_shape(t, field, &shape) != 0)
        return -1;
    block_walk w = {t, field, shape.snode == 0, fn, user};
    return plm_rt_walk(t->rt, shape.snode, block_visit, &w);
}

void plm_tree_gc(plm_tree *t)
{
    plm_rt_prune(t->rt);
    for (int32_t s = 0; s < t->rt->num_snodes; s++)
        plm_rt_gc(t->rt, s);
}

void plm_tree_stats_get(plm_tree *t, plm_tree_stats *st)
{
    memset(st, 0, sizeof *st);
    plm_runtime *rt = t->rt;
    st->bytes_in_use = plm_rt_bytes_in_use(rt);
    st->budget = rt->budget;
    st->num_snodes = rt->num_snodes;
    for (int32_t s = 0; s < rt->num_snodes; s++) {
        const plm_rt_snode *sn = &rt->snodes[s];
        plm_tree_snode_stats *o = &st->snode[s];
        o->kind = sn->kind;
        o->list_size = sn->list.count;
        if (sn->kind != PLM_RT_POINTER && sn->kind != PLM_RT_DYNAMIC)
            continue;
        const plm_rt_allocator *a = &sn->alloc;
        o->live_cells = a->live;
        o->carved_cells = a->data.count;
        for (uint32_t k = 0; k < a->data.max_chunks; k++)
            o->data_chunks += a->data.chunks[k] != NULL;
        o->free_cells = a->free.count - (a->free_used < a->free.count ? a->free_used : a->free.count);
        o->recycled_cells = a->recycled.count;
        o->chunk_bytes = a->data.elem_bytes << a->data.log2_chunk_elems;
        if (sn->kind == PLM_RT_POINTER)
            for (int32_t ch = sn->first_child; ch >= 0; ch = rt->snodes[ch].next_sibling)
                st->leaf_value_bytes += (uint64_t)a->live * rt->snodes[ch].leaf_data_bytes;
    }
}

int plm_tree_check_error(plm_tree *t, char *msg, size_t len)
{
    char dummy[8];
    if (!msg || len == 0)
        msg = dummy, len = sizeof dummy;
    msg[0] = 0;
    if (t->error_flag && __atomic_load_n(t->error_flag, __ATOMIC_ACQUIRE) == 0)
        return 0;
    uint32_t e = plm_rt_format_error(t->rt, msg, len);
    if (e == PLM_RT_ERR_BUDGET && t->cut && t->rt->error_budget == t->budget) {
        size_t n = strlen(msg);
        snprintf(msg + n, len - n, " (this field's share of address space: the process's limit, "
                                   "ulimit -v, let it reserve no more)");
    }
    if (e != PLM_RT_OK)
        plm_rt_clear_error(t->rt);
    return (int)e;
}

void plm_tree_set_error_flag(plm_tree *t, uint32_t *flag)
{
    t->error_flag = flag;
    t->rt->error_flag = flag;
    if (flag)
        __atomic_store_n(flag, plm_rt_error(t->rt) != PLM_RT_OK, __ATOMIC_RELEASE);
}
