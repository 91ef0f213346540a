/* Task metadata: which states a task reads and writes, and the flags the state-flow graph's
 * fusion and dead-store elimination trust. Every flag starts optimistic per state and is
 * cleared by the first access that breaks it, so the result errs on "false". Works on unlowered
 * IR (global_ptr form) precisely and on lowered IR (sn_* form) conservatively. */
#include "engine/ir/ir_internal.h"

#include <stdlib.h>

typedef struct lstate {
    uint8_t mask_r, mask_w, alloc_w, list_r, list_w;
    uint8_t mask_query;    /* something other than an activation touched the mask */
    uint8_t alloc_other;   /* something other than an activation touched the allocator */
    uint8_t mask_dep;      /* an activation not index-only/unconditional */
    uint8_t act_off_index; /* an activation not at exactly the loop index */
    uint8_t act_every;     /* an activation at the loop index in every iteration */
} lstate;

typedef struct fstate {
    uint8_t r, w, any;
    uint8_t not_elem;      /* an access not at exactly the loop index */
    uint8_t not_atomic;    /* a plain load/store, or an atomic whose old value is used */
    int atomic_op;         /* -1 none yet, -2 mixed */
    uint8_t cover;         /* an unconditional element-wise store was seen */
    uint8_t full_store;    /* serial: unconditional store */
    lstate lv[IR_MAX_LEVELS];
} fstate;

typedef struct mctx {
    ir_task *t;
    ir_stmt *loop;         /* the task's parallel loop, or NULL */
    ir_block *top;         /* block whose statements run unconditionally once per iteration */
    fstate *fs;
    uint8_t gtmp_r, gtmp_w;
    int continue_seen;
} mctx;

static int index_only(const mctx *m, const ir_stmt *s, int depth)
{
    if (depth > 64)
        return 0;
    switch (s->op) {
    case IR_CONST:
        return 1;
    case IR_LOOP_INDEX:
        return m->loop && s->loop == m->loop;
    case IR_UNARY: case IR_BINARY: case IR_CAST: case IR_SELECT: case IR_FMA:
        for (int i = 0; i < s->nargs; i++)
            if (!index_only(m, s->arg[i], depth + 1))
                return 0;
        return 1;
    default:
        return 0;
    }
}

/* f[I] at exactly the loop index of the task's loop, every axis in order. */
static int elementwise(const mctx *m, const ir_stmt *p)
{
    const ir_field_info *f = &m->t->fields[p->field];
    if (!m->loop || f->dim == 0 || p->nargs != f->dim)
        return 0;
    if (m->loop->op == IR_STRUCT_FOR && m->t->fields[m->loop->field].dim != f->dim)
        return 0;
    if (m->loop->op == IR_RANGE_FOR && (f->dim != 1 || m->loop->arg[0]->ty != IR_I32))
        return 0;
    for (int i = 0; i < p->nargs; i++) {
        const ir_stmt *a = p->arg[i];
        if (a->op != IR_LOOP_INDEX || a->loop != m->loop || a->index != (uint32_t)i)
            return 0;
    }
    return 1;
}

static int unconditional(const mctx *m, const ir_stmt *s)
{
    return s->parent == m->top && !m->continue_seen;
}

static int deepest_sparse(const ir_field_info *f)
{
    for (int l = f->nlevels - 1; l >= 1; l--)
        if (ir_level_is_sparse(&f->levels[l]))
            return l;
    return 0;
}

/* Every sparse level the element's path crosses is read (inactive reads give background). */
static void path_read(mctx *m, uint32_t field, int query)
{
    const ir_field_info *f = &m->t->fields[field];
    for (int l = 1; l < f->nlevels; l++)
        if (ir_level_is_sparse(&f->levels[l])) {
            m->fs[field].lv[l].mask_r = 1;
            if (query)
                m->fs[field].lv[l].mask_query = 1;
        }
}

/* Whether s runs in an iteration is decided by the loop index and constants alone: every
 * block between s and the loop body belongs to an `if` on such a condition (no continue seen,
 * whose condition could be anything). */
static int index_decided(const mctx *m, const ir_stmt *s)
{
    if (m->continue_seen || !m->top)
        return 0;
    for (const ir_block *b = s->parent; b != m->top; b = b->owner->parent) {
        if (!b || !b->owner || b->owner->op != IR_IF || !index_only(m, b->owner->arg[0], 0))
            return 0;
    }
    return 1;
}

static void activation(mctx *m, const ir_stmt *at, uint32_t field, uint32_t demoted,
                       int from, int to, const ir_stmt *idx_src)
{
    const ir_field_info *f = &m->t->fields[field];
    int dep = !unconditional(m, at) && !index_decided(m, at);
    if (idx_src)
        for (int i = 0; i < idx_src->nargs; i++)
            if (!index_only(m, idx_src->arg[i], 0))
                dep = 1;
    if (!idx_src)
        dep = 1;
    int at_index = idx_src && idx_src->field == field && elementwise(m, idx_src);
    for (int l = from; l <= to && l < f->nlevels; l++) {
        if (!ir_level_is_sparse(&f->levels[l]) || (demoted & (1u << l)))
            continue;
        lstate *ls = &m->fs[field].lv[l];
        ls->mask_w = 1;
        if (dep)
            ls->mask_dep = 1;
        if (!at_index)
            ls->act_off_index = 1;
        else if (unconditional(m, at))
            ls->act_every = 1;
        if (ir_level_has_alloc(&f->levels[l]))
            ls->alloc_w = 1;
    }
}

static void deactivation(mctx *m, uint32_t field, int level)
{
    const ir_field_info *f = &m->t->fields[field];
    fstate *fs = &m->fs[field];
    if (level < 1)
        return;
    fs->w = fs->any = 1;
    fs->not_atomic = 1;
    for (int l = level; l < f->nlevels; l++) {
        if (!ir_level_is_sparse(&f->levels[l]))
            continue;
        lstate *ls = &fs->lv[l];
        ls->mask_r = ls->mask_w = 1;
        ls->mask_query = 1;
        ls->mask_dep = 1;
        ls->act_off_index = 1;
        if (ir_level_has_alloc(&f->levels[l]))
            ls->alloc_w = ls->alloc_other = 1;
    }
}

static void value_access(mctx *m, const ir_stmt *s, const ir_stmt *p, int read, int write)
{
    fstate *fs = &m->fs[p->field];
    fs->any = 1;
    fs->r |= (uint8_t)read;
    fs->w |= (uint8_t)write;
    int elem = p->op == IR_GLOBAL_PTR && elementwise(m, p);
    if (!elem)
        fs->not_elem = 1;
    if (s->op == IR_ATOMIC && s->mark == 0) {
        if (fs->atomic_op == -1)
            fs->atomic_op = s->sub;
        else if (fs->atomic_op != s->sub)
            fs->atomic_op = -2;
    } else {
        fs->not_atomic = 1;
    }
    if (s->op == IR_GLOBAL_STORE && unconditional(m, s)) {
        if (elem)
            fs->cover = 1;
        fs->full_store = 1;
    }
}

static int visit(ir_stmt *s, void *ud)
{
    mctx *m = ud;
    ir_task *t = m->t;
    switch (s->op) {
    case IR_CONTINUE:
        m->continue_seen = 1;
        break;
    case IR_GLOBAL_LOAD: case IR_GLOBAL_STORE: case IR_ATOMIC: {
        const ir_stmt *p = s->arg[0];
        int rd = s->op != IR_GLOBAL_STORE, wr = s->op != IR_GLOBAL_LOAD;
        if (p->op == IR_GTMP_PTR) {
            m->gtmp_r |= (uint8_t)rd;
            m->gtmp_w |= (uint8_t)wr;
            break;
        }
        if (p->field >= t->nfields)
            break;
        value_access(m, s, p, rd, wr);
        if (p->op == IR_GLOBAL_PTR) {
            if (rd)
                path_read(m, p->field, 0);
            if (wr)
                activation(m, s, p->field, p->demoted, 1, t->fields[p->field].nlevels - 1, p);
        }
        break;
    }
    case IR_IS_ACTIVE:
        path_read(m, s->field, 1);
        break;
    case IR_ACTIVATE:
        activation(m, s, s->field, s->demoted, 1, t->fields[s->field].nlevels - 1, s);
        break;
    case IR_DEACTIVATE:
        deactivation(m, s->field, deepest_sparse(&t->fields[s->field]));
        break;
    case IR_SN_LOOKUP:
    case IR_SN_FIELD_PTR: {
        int l = s->op == IR_SN_LOOKUP ? s->level : t->fields[s->field].nlevels - 1;
        if (s->activate)
            activation(m, s, s->field, 0, l, l, NULL);
        else if (ir_level_is_sparse(&t->fields[s->field].levels[l]))
            m->fs[s->field].lv[l].mask_r = 1;
        break;
    }
    case IR_SN_IS_ACTIVE:
        if (ir_level_is_sparse(&t->fields[s->field].levels[s->level])) {
            m->fs[s->field].lv[s->level].mask_r = 1;
            m->fs[s->field].lv[s->level].mask_query = 1;
        }
        break;
    case IR_SN_ACTIVATE:
        activation(m, s, s->field, 0, s->level, s->level, NULL);
        break;
    case IR_SN_DEACTIVATE:
        deactivation(m, s->field, s->level);
        break;
    default:
        break;
    }
    return 0;
}

static int cmp_access(const void *a, const void *b)
{
    const ir_access *x = a, *y = b;
    if (x->kind != y->kind)
        return x->kind - y->kind;
    if (x->field != y->field)
        return x->field - y->field;
    return x->level - y->level;
}

int ir_task_compute_meta(ir_task *t)
{
    ir_task_meta *md = &t->meta;
    md->kind = t->kind == IR_TASK_KERNEL ? IR_TASK_SERIAL : t->kind;
    md->flags = 0;
    md->field = t->field;
    md->level = t->level;
    md->begin = md->end = 0;
    md->naccess = 0;
    md->access = NULL;
    mctx m = {.t = t, .top = t->body};
    m.fs = calloc(t->nfields ? t->nfields : 1, sizeof *m.fs);
    if (!m.fs)
        return -1;
    for (uint32_t f = 0; f < t->nfields; f++)
        m.fs[f].atomic_op = -1;
    if ((t->kind == IR_TASK_RANGE_FOR || t->kind == IR_TASK_STRUCT_FOR) && t->body->last) {
        m.loop = t->body->last;
        m.top = m.loop->body;
    }
    if (t->kind == IR_TASK_RANGE_FOR && m.loop) {
        const ir_stmt *b = m.loop->arg[0], *e = m.loop->arg[1];
        if (b->op == IR_CONST && e->op == IR_CONST) {
            md->begin = b->ival;
            md->end = e->ival;
        } else {
            md->flags |= IR_TASKF_DYNAMIC_RANGE;
        }
    }
    ir_task_count_uses(t); /* atomics whose old value is unused have mark == 0 */
    ir_walk(t->body, visit, &m);
    if (t->field < t->nfields) {
        const ir_field_info *f = &t->fields[t->field];
        lstate *ls = &m.fs[t->field].lv[t->level < IR_MAX_LEVELS ? t->level : 0];
        switch (t->kind) {
        case IR_TASK_STRUCT_FOR: {
            ls->list_r = 1;
            int leaf = f->nlevels - 1;
            if (ir_level_is_sparse(&f->levels[leaf])) {
                m.fs[t->field].lv[leaf].mask_r = 1;
                m.fs[t->field].lv[leaf].mask_query = 1;
            }
            break;
        }
        case IR_TASK_CLEAR_LIST:
            ls->list_w = 1;
            break;
        case IR_TASK_LISTGEN:
            ls->list_w = 1;
            if (ir_level_is_sparse(&f->levels[t->level]))
                ls->mask_r = ls->mask_query = 1;
            if (t->level > 1)
                m.fs[t->field].lv[t->level - 1].list_r = 1;
            break;
        case IR_TASK_GC:
            ls->alloc_w = ls->alloc_other = 1;
            if (ir_level_is_sparse(&f->levels[t->level]))
                ls->mask_r = ls->mask_query = 1;
            break;
        default:
            break;
        }
    }
    /* count, then fill */
    uint32_t n = m.gtmp_r || m.gtmp_w;
    for (uint32_t f = 0; f < t->nfields; f++) {
        n += m.fs[f].any;
        for (int l = 0; l < IR_MAX_LEVELS; l++) {
            const lstate *ls = &m.fs[f].lv[l];
            n += (ls->mask_r || ls->mask_w) + (ls->list_r || ls->list_w) + ls->alloc_w;
        }
    }
    ir_access *acc = n ? ir_alloc(t, n * sizeof *acc) : NULL;
    if (n && !acc) {
        free(m.fs);
        return -1;
    }
    uint32_t k = 0;
    int loop_task = m.loop != NULL;
    for (uint32_t f = 0; f < t->nfields; f++) {
        const fstate *fs = &m.fs[f];
        const ir_field_info *fi = &t->fields[f];
        if (fs->any) {
            ir_access *a = &acc[k++];
            a->kind = IR_STATE_VALUE;
            a->field = (uint16_t)f;
            a->flags = (fs->r ? IR_ACC_READ : 0) | (fs->w ? IR_ACC_WRITE : 0);
            if (loop_task && !fs->not_elem && fi->dim > 0)
                a->flags |= IR_ACC_ELEMENTWISE | IR_ACC_UNIQUE;
            if (!fs->not_atomic && fs->atomic_op >= 0) {
                a->flags |= IR_ACC_ATOMIC;
                a->atomic_op = (uint8_t)fs->atomic_op;
            }
            if (fs->cover && (a->flags & IR_ACC_UNIQUE) && fs->w)
                a->flags |= IR_ACC_COVER;
            if (t->kind == IR_TASK_SERIAL && fi->dim == 0 && fs->full_store && !fs->r)
                a->flags |= IR_ACC_FULL;
        }
        for (int l = 0; l < IR_MAX_LEVELS; l++) {
            const lstate *ls = &fs->lv[l];
            if (ls->mask_r || ls->mask_w) {
                ir_access *a = &acc[k++];
                a->kind = IR_STATE_MASK;
                a->field = (uint16_t)f;
                a->level = (uint8_t)l;
                a->flags = (ls->mask_r ? IR_ACC_READ : 0) | (ls->mask_w ? IR_ACC_WRITE : 0);
                if (ls->mask_w && !ls->mask_query && !ls->mask_r) {
                    a->flags |= IR_ACC_ATOMIC;
                    a->atomic_op = IR_ATOMIC_ACTIVATE;
                }
                if (ls->mask_w && !ls->mask_dep)
                    a->flags |= IR_ACC_INDEX_ONLY;
                if (ls->mask_w && !ls->act_off_index)
                    a->flags |= IR_ACC_AT_INDEX | (ls->act_every ? IR_ACC_AT_EVERY_INDEX : 0);
                if (!ls->mask_query)
                    a->flags |= IR_ACC_LOOKUP;
            }
            if (ls->list_r || ls->list_w) {
                ir_access *a = &acc[k++];
                a->kind = IR_STATE_LIST;
                a->field = (uint16_t)f;
                a->level = (uint8_t)l;
                a->flags = (ls->list_r ? IR_ACC_READ : 0) | (ls->list_w ? IR_ACC_WRITE : 0);
            }
            if (ls->alloc_w) {
                ir_access *a = &acc[k++];
                a->kind = IR_STATE_ALLOC;
                a->field = (uint16_t)f;
                a->level = (uint8_t)l;
                a->flags = IR_ACC_WRITE;
                if (!ls->alloc_other) {
                    a->flags |= IR_ACC_ATOMIC;
                    a->atomic_op = IR_ATOMIC_ACTIVATE;
                }
            }
        }
    }
    if (m.gtmp_r || m.gtmp_w) {
        ir_access *a = &acc[k++];
        a->kind = IR_STATE_GTMP;
        a->flags = (m.gtmp_r ? IR_ACC_READ : 0) | (m.gtmp_w ? IR_ACC_WRITE : 0);
    }
    if (k > 1) /* acc is NULL when the task touches no state: qsort(NULL, 0) is UB */
        qsort(acc, k, sizeof *acc, cmp_access);
    md->naccess = k;
    md->access = acc;
    t->has_meta = 1;
    free(m.fs);
    return 0;
}

const ir_access *ir_meta_find(const ir_task_meta *m, int kind, uint32_t field, uint32_t level)
{
    for (uint32_t i = 0; i < m->naccess; i++) {
        const ir_access *a = &m->access[i];
        if (a->kind == kind && (kind == IR_STATE_GTMP ||
                                (a->field == field && (kind == IR_STATE_VALUE || a->level == level))))
            return a;
    }
    return NULL;
}
