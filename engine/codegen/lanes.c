/* Lanes: the isomorphic float arithmetic of several stores in a parallel loop's body, done once
 * in LLVM vectors, one lane per store. Fusion puts sibling kernels (one per advected quantity)
 * in one body; CSE merges what they share (the backtrace) and leaves one copy per sibling of
 * the rest (a trilinear blend of each quantity's corners), which LLVM's SLP vectorizer leaves
 * scalar (three lanes, stores through selects). Here those copies become one vector op per
 * statement: scalar loads go into lanes, the blend runs once, each lane is stored.
 *
 * Only the fast copy of a CPU loop uses lanes: the grouped arithmetic and its stores are
 * emitted where the set's last store was, so a store moves past the statements between it
 * and that point, which is sound when nothing there touches the stored field. Statically each
 * store's slot must not be read or written in that window; at run time the fast copy's check
 * also requires those slots to be bound to different fields (cg_lanes_distinct).
 *
 * Only reads the IR; the maps are ours. One per cg_fn, made and freed by its owner. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "engine/codegen/cg_internal.h"

#define LANES_MAX 4     /* a 128-bit vector of f32 */
#define LANES_MIN_OPS 3 /* fewer grouped ops than this: not worth the inserts */

enum { OP_SPLAT = 1, OP_GROUP = 2, OP_GATHER = 3 };

typedef struct lane_opnd {
    int kind;
    int group;                       /* OP_GROUP */
    const ir_stmt *s[LANES_MAX];     /* OP_SPLAT: s[0]; OP_GATHER: one per lane */
} lane_opnd;

typedef struct lane_group {
    const ir_stmt *m[LANES_MAX];     /* the statement of each lane */
    lane_opnd arg[IR_MAX_ARGS];
    LLVMValueRef v;                  /* its vector in the current emission of the block */
} lane_group;

typedef struct lane_set {
    int n;
    const ir_stmt *store[LANES_MAX];
    int root;                        /* group of the stored values */
    const ir_stmt *point;            /* the last store: the set is emitted there */
} lane_set;

struct cg_lanes {
    const ir_block *blk;             /* the loop body whose top-level statements are grouped */
    lane_group *g;
    int ng, capg;
    lane_set *set;
    int nset, capset;
    cg_smap pos;      /* top-level statement of blk -> position + 1 */
    cg_smap uses;     /* statement -> operand uses in the whole task */
    cg_smap guses;    /* statement -> uses by grouped statements and stores */
    cg_smap member;   /* grouped statement -> group + 1; deferred store -> -(set + 1) */
    cg_smap scalar;   /* statements the current trial keeps scalar: used outside its groups */
    struct lane_undo { cg_smap *m; const ir_stmt *s; int old; } *undo; /* the current trial's */
    int nundo, capundo;
    int pairs[64][2]; /* slot pairs the run-time check compares */
    int npairs;
};

/* ---- analysis ---- */

static void count_uses(cg_smap *uses, const ir_block *blk, int *oom)
{
    for (const ir_stmt *s = blk ? blk->first : NULL; s; s = s->next) {
        for (int i = 0; i < s->nargs; i++)
            if (s->arg[i] && cg_smap_put(uses, s->arg[i], cg_smap_get(uses, s->arg[i]) + 1))
                *oom = 1;
        count_uses(uses, s->body, oom);
        count_uses(uses, s->els, oom);
    }
}

static int packable(const ir_stmt *s)
{
    if (s->ty != IR_F32 && s->ty != IR_F64 && s->ty != IR_BOOL)
        return 0;
    switch (s->op) {
    case IR_BINARY:
        if (!ir_type_is_float(s->arg[0]->ty))
            return 0;
        switch (s->sub) {
        case IR_ADD: case IR_SUB: case IR_MUL: case IR_DIV: case IR_MIN: case IR_MAX: return 1;
        default: return ir_binop_is_cmp(s->sub);
        }
    case IR_UNARY:
        return ir_type_is_float(s->ty) &&
               (s->sub == IR_NEG || s->sub == IR_ABS || s->sub == IR_SQRT || s->sub == IR_FLOOR ||
                s->sub == IR_CEIL || s->sub == IR_TRUNC);
    case IR_SELECT: case IR_FMA: return ir_type_is_float(s->ty);
    default: return 0;
    }
}

static int same_shape(const ir_stmt *a, const ir_stmt *b)
{
    return a->op == b->op && a->sub == b->sub && a->ty == b->ty && a->nargs == b->nargs &&
           (a->op != IR_BINARY || a->arg[0]->ty == b->arg[0]->ty);
}

static int same_const(const ir_stmt *a, const ir_stmt *b)
{
    return a->op == IR_CONST && b->op == IR_CONST && a->ty == b->ty && a->ival == b->ival &&
           (a->fval == b->fval || (a->fval != a->fval && b->fval != b->fval));
}

static int note(struct cg_lanes *l, cg_smap *m, const ir_stmt *s, int v)
{
    if (l->nundo == l->capundo) {
        int cap = l->capundo ? 2 * l->capundo : 64;
        struct lane_undo *u = realloc(l->undo, (size_t)cap * sizeof *u);
        if (!u)
            return -1;
        l->undo = u;
        l->capundo = cap;
    }
    l->undo[l->nundo++] = (struct lane_undo){m, s, cg_smap_get(m, s)};
    return cg_smap_put(m, s, v);
}

/* Matches the lanes' statements t[0..n) as one operand; -1 when they cannot be (a statement
 * already grouped at another lane or in another group), -2 when out of memory. */
static int match(struct cg_lanes *l, const ir_stmt **t, int n, lane_opnd *out)
{
    memset(out, 0, sizeof *out);
    int all_same = 1, all_const = 1;
    for (int k = 1; k < n; k++) {
        all_same &= t[k] == t[0];
        all_const &= same_const(t[k], t[0]);
    }
    int g0 = cg_smap_get(&l->member, t[0]);
    if (g0 > 0) { /* grouped already: only as the same group, lane for lane */
        const lane_group *g = &l->g[g0 - 1];
        for (int k = 0; k < n; k++)
            if (g->m[k] != t[k])
                return -1;
        for (int k = 0; k < n; k++)
            if (note(l, &l->guses, t[k], cg_smap_get(&l->guses, t[k]) + 1))
                return -2;
        out->kind = OP_GROUP;
        out->group = g0 - 1;
        return 0;
    }
    for (int k = 1; k < n; k++)
        if (cg_smap_get(&l->member, t[k]) > 0)
            return -1;
    if (all_same || all_const) {
        out->kind = OP_SPLAT;
        out->s[0] = t[0];
        return 0;
    }
    int ok = packable(t[0]) && t[0]->parent == l->blk && !cg_smap_get(&l->scalar, t[0]);
    for (int k = 1; k < n && ok; k++) {
        ok = same_shape(t[k], t[0]) && t[k]->parent == l->blk && !cg_smap_get(&l->scalar, t[k]);
        for (int j = 0; j < k && ok; j++)
            ok = t[j] != t[k];
    }
    if (!ok) {
        out->kind = OP_GATHER;
        for (int k = 0; k < n; k++)
            out->s[k] = t[k];
        return 0;
    }
    if (l->ng == l->capg) {
        int cap = l->capg ? 2 * l->capg : 32;
        lane_group *g = realloc(l->g, (size_t)cap * sizeof *g);
        if (!g)
            return -2;
        l->g = g;
        l->capg = cap;
    }
    int gi = l->ng++;
    lane_group *g = &l->g[gi];
    memset(g, 0, sizeof *g);
    for (int k = 0; k < n; k++) {
        g->m[k] = t[k];
        if (note(l, &l->member, t[k], gi + 1) ||
            note(l, &l->guses, t[k], cg_smap_get(&l->guses, t[k]) + 1))
            return -2;
    }
    for (int a = 0; a < t[0]->nargs; a++) {
        const ir_stmt *ta[LANES_MAX];
        for (int k = 0; k < n; k++)
            ta[k] = t[k]->arg[a];
        lane_opnd o;
        int rc = match(l, ta, n, &o);
        if (rc)
            return rc;
        l->g[gi].arg[a] = o; /* l->g may have moved */
    }
    out->kind = OP_GROUP;
    out->group = gi;
    return 0;
}

/* The slot a field access goes through; -1 for statements that touch no field memory (a local,
 * a temporary, arithmetic); -2 when a moved store must not pass it: an access through an
 * unknown pointer, or a deactivation (its block may be recycled before the moved store). */
static int access_slot(const ir_stmt *s)
{
    if (s->op == IR_SN_DEACTIVATE || s->op == IR_DEACTIVATE)
        return -2;
    if (s->op != IR_GLOBAL_LOAD && s->op != IR_GLOBAL_STORE && s->op != IR_ATOMIC)
        return -1;
    const ir_stmt *p = s->arg[0];
    return p && p->op == IR_SN_FIELD_PTR ? (int)p->field : -2;
}

static int add_pair(struct cg_lanes *l, int a, int b)
{
    if (a > b) {
        int t = a;
        a = b;
        b = t;
    }
    for (int i = 0; i < l->npairs; i++)
        if (l->pairs[i][0] == a && l->pairs[i][1] == b)
            return 0;
    if (l->npairs == 64)
        return -1;
    l->pairs[l->npairs][0] = a;
    l->pairs[l->npairs][1] = b;
    l->npairs++;
    return 0;
}

/* Whether store st, moved later, may pass statement s (not its nested blocks): s touches no
 * field memory, or another slot (noted as a pair for the run-time check), or another component
 * of st's own element (disjoint bytes: a vec3 stored component by component). */
static int may_pass(struct cg_lanes *l, const ir_stmt *st, const ir_stmt *s)
{
    int sl = access_slot(s);
    if (sl == -1)
        return 1;
    if (sl == -2)
        return 0;
    const ir_stmt *p = st->arg[0], *q = s->arg[0];
    if (sl == (int)p->field)
        return q->arg[0] == p->arg[0] && q->arg[1] == p->arg[1] && q->comp != p->comp;
    return add_pair(l, (int)p->field, sl) == 0;
}

static int passes_block(struct cg_lanes *l, const ir_stmt *st, const ir_block *blk)
{
    for (const ir_stmt *s = blk ? blk->first : NULL; s; s = s->next)
        if (!may_pass(l, st, s) || !passes_block(l, st, s->body) || !passes_block(l, st, s->els))
            return 0;
    return 1;
}

/* A store the set may move: through a field element's pointer, whose slot is known. Only the
 * memory write moves: the pointer's statements (and any activation in them, or the fast copy's
 * activation at the list entry's start) stay where they were. */
static int movable_store(const cg_fn *f, const ir_stmt *st)
{
    const ir_stmt *p = st->arg[0];
    return p && p->op == IR_SN_FIELD_PTR && p->field < f->task->nfields;
}

/* Each store of the set may move to the set's point: movable, and it may pass every statement
 * after it up to the point, nested ones too. */
static int stores_movable(struct cg_lanes *l, const cg_fn *f, const lane_set *ls)
{
    int pp = cg_smap_get(&l->pos, ls->point);
    for (int k = 0; k < ls->n; k++) {
        const ir_stmt *st = ls->store[k];
        if (!movable_store(f, st))
            return 0;
        for (const ir_stmt *s = st->next; s && cg_smap_get(&l->pos, s) <= pp; s = s->next)
            if (!may_pass(l, st, s) || !passes_block(l, st, s->body) ||
                !passes_block(l, st, s->els))
                return 0;
    }
    return 1;
}

static void undo_trial(struct cg_lanes *l, int ng0, int npairs0)
{
    for (int i = l->nundo - 1; i >= 0; i--) /* newest first: the oldest value stays */
        cg_smap_put(l->undo[i].m, l->undo[i].s, l->undo[i].old);
    l->nundo = 0;
    l->ng = ng0;
    l->npairs = npairs0;
}

/* Matches the values of stores st[0..n) and checks the groups: 1 when they make a set worth
 * having (enough grouped ops, each used only by grouped statements and the stores), 0 when
 * not, -1 when out of memory. The groups stay entered: the caller keeps or undoes them. */
static int trial(struct cg_lanes *l, const ir_stmt **st, int n, lane_opnd *root)
{
    int ng0 = l->ng, np0 = l->npairs;
    const ir_stmt *val[LANES_MAX];
    for (int k = 0; k < n; k++)
        val[k] = st[k]->arg[1];
    /* A statement some scalar code also uses must stay scalar, and with it what it is made of
     * (deferred to the set's point, a vector would come too late for that use): such
     * statements are marked and the match runs again, until every group is used only by
     * groups and stores. Each round marks at least one more statement. */
    cg_smap_free(&l->scalar);
    memset(&l->scalar, 0, sizeof l->scalar);
    for (;;) {
        l->nundo = 0;
        int rc = match(l, val, n, root);
        if (rc == -2)
            return -1;
        if (rc != 0 || root->kind != OP_GROUP)
            return 0;
        int marked = 0;
        for (int gi = ng0; gi < l->ng; gi++)
            for (int k = 0; k < n; k++) {
                const ir_stmt *m = l->g[gi].m[k];
                if (cg_smap_get(&l->uses, m) == cg_smap_get(&l->guses, m))
                    continue;
                if (cg_smap_put(&l->scalar, m, 1) != 0)
                    return -1;
                marked = 1;
            }
        if (!marked)
            return l->ng - ng0 >= LANES_MIN_OPS;
        undo_trial(l, ng0, np0);
    }
}

/* Keeps the stores st[0..n) as a set when their trial passes and they may move; 0 or -1 (out
 * of memory). */
static int try_set(struct cg_lanes *l, const cg_fn *f, const ir_stmt **st, int n)
{
    int ng0 = l->ng, npairs0 = l->npairs;
    lane_opnd root;
    int keep = trial(l, st, n, &root);
    if (keep < 0)
        return -1;
    lane_set ls = {.n = n, .root = root.group};
    if (keep) {
        int last = 0;
        for (int k = 0; k < n; k++) {
            ls.store[k] = st[k];
            int p = cg_smap_get(&l->pos, st[k]);
            if (p > last) {
                last = p;
                ls.point = st[k];
            }
        }
        keep = stores_movable(l, f, &ls);
    }
    if (keep && l->nset == l->capset) {
        int cap = l->capset ? 2 * l->capset : 8;
        lane_set *s = realloc(l->set, (size_t)cap * sizeof *s);
        if (!s)
            return -1;
        l->set = s;
        l->capset = cap;
    }
    if (!keep) {
        undo_trial(l, ng0, npairs0);
        return 0;
    }
    l->set[l->nset] = ls;
    for (int k = 0; k < n; k++)
        if (cg_smap_put(&l->member, st[k], -(l->nset + 1)))
            return -1;
    l->nset++;
    l->nundo = 0;
    return 0;
}

/* Stores of blk, greedily: each unclaimed store with the next ones whose values match it. */
static int find_sets(struct cg_lanes *l, const cg_fn *f)
{
    const ir_stmt *st[256];
    int ns = 0;
    for (const ir_stmt *s = l->blk->first; s && ns < 256; s = s->next)
        if (s->op == IR_GLOBAL_STORE && s->arg[1] && packable(s->arg[1]) &&
            ir_type_is_float(s->arg[1]->ty))
            st[ns++] = s;
    for (int i = 0; i < ns; i++) {
        if (cg_smap_get(&l->member, st[i]))
            continue;
        const ir_stmt *lanes[LANES_MAX] = {st[i]};
        int n = 1;
        for (int j = i + 1; j < ns && n < LANES_MAX; j++) {
            if (cg_smap_get(&l->member, st[j]) || !same_shape(st[j]->arg[1], st[i]->arg[1]))
                continue;
            lanes[n] = st[j];
            /* only the outcome counts: the set is tried again whole below */
            int ng0 = l->ng, np0 = l->npairs;
            lane_opnd o;
            int good = trial(l, lanes, n + 1, &o);
            undo_trial(l, ng0, np0);
            if (good < 0)
                return -1;
            n += good;
        }
        if (n >= 2 && try_set(l, f, lanes, n) < 0)
            return -1;
    }
    return 0;
}

int cg_lanes_setup(cg_fn *f, const ir_stmt *loop)
{
    if (f->target != CG_TARGET_CPU || !loop || !loop->body)
        return 0;
    struct cg_lanes *l = calloc(1, sizeof *l);
    if (!l)
        return cg_fail(f, "out of memory");
    l->blk = loop->body;
    int oom = 0, p = 0;
    count_uses(&l->uses, f->task->body, &oom);
    for (const ir_stmt *s = l->blk->first; s && !oom; s = s->next)
        oom = cg_smap_put(&l->pos, s, ++p) != 0;
    if (oom || find_sets(l, f) != 0) {
        cg_lanes_free(l);
        return cg_fail(f, "out of memory");
    }
    if (!l->nset) {
        cg_lanes_free(l);
        return 0;
    }
    f->lanes = l;
    return 0;
}

void cg_lanes_free(cg_lanes *l)
{
    if (!l)
        return;
    cg_smap_free(&l->pos);
    cg_smap_free(&l->uses);
    cg_smap_free(&l->guses);
    cg_smap_free(&l->member);
    cg_smap_free(&l->scalar);
    free(l->g);
    free(l->set);
    free(l->undo);
    free(l);
}

LLVMValueRef cg_lanes_distinct(cg_fn *f)
{
    LLVMValueRef ok = LLVMConstInt(f->t_i1, 1, 0);
    struct cg_lanes *l = f->lanes;
    for (int i = 0; l && i < l->npairs; i++)
        ok = LLVMBuildAnd(f->b, ok, cg_slots_differ(f, l->pairs[i][0], l->pairs[i][1]),
                          "lanes.distinct");
    return ok;
}

/* ---- emission ---- */

void cg_lanes_block_start(cg_fn *f, const ir_block *blk)
{
    struct cg_lanes *l = f->lanes;
    if (l && blk == l->blk)
        for (int i = 0; i < l->ng; i++)
            l->g[i].v = NULL;
}

static LLVMValueRef splat(cg_fn *f, LLVMValueRef s, int n)
{
    LLVMTypeRef vt = LLVMVectorType(LLVMTypeOf(s), (unsigned)n);
    LLVMValueRef v = LLVMBuildInsertElement(f->b, LLVMGetUndef(vt), s,
                                            LLVMConstInt(f->t_i32, 0, 0), "");
    LLVMValueRef zeros = LLVMConstNull(LLVMVectorType(f->t_i32, (unsigned)n));
    return LLVMBuildShuffleVector(f->b, v, LLVMGetUndef(vt), zeros, "splat");
}

static LLVMValueRef group_value(cg_fn *f, int gi, int n);

static LLVMValueRef operand(cg_fn *f, const lane_opnd *o, int n)
{
    if (o->kind == OP_GROUP)
        return group_value(f, o->group, n);
    if (o->kind == OP_SPLAT) {
        LLVMValueRef s = cg_val(f, o->s[0]);
        return s ? splat(f, s, n) : NULL;
    }
    LLVMValueRef v = NULL;
    for (int k = 0; k < n; k++) {
        LLVMValueRef s = cg_val(f, o->s[k]);
        if (!s)
            return NULL;
        if (!v)
            v = LLVMGetUndef(LLVMVectorType(LLVMTypeOf(s), (unsigned)n));
        v = LLVMBuildInsertElement(f->b, v, s, LLVMConstInt(f->t_i32, (unsigned)k, 0), "lane");
    }
    return v;
}

static LLVMValueRef group_value(cg_fn *f, int gi, int n)
{
    lane_group *g = &f->lanes->g[gi];
    if (g->v)
        return g->v;
    const ir_stmt *s = g->m[0];
    LLVMValueRef a[IR_MAX_ARGS] = {NULL};
    for (int i = 0; i < s->nargs; i++) {
        /* a select's condition shared by all lanes stays scalar (select i1, <n x T>, ...) */
        if (s->op == IR_SELECT && i == 0 && g->arg[0].kind == OP_SPLAT)
            a[0] = cg_val(f, g->arg[0].s[0]);
        else
            a[i] = operand(f, &g->arg[i], n);
        if (!a[i])
            return NULL;
    }
    LLVMValueRef v = NULL;
    switch (s->op) {
    case IR_BINARY: v = cg_emit_binary(f, s->sub, s->arg[0]->ty, a[0], a[1]); break;
    case IR_UNARY: v = cg_emit_unary(f, s->sub, s->ty, a[0]); break;
    case IR_SELECT: v = LLVMBuildSelect(f->b, a[0], a[1], a[2], "sel"); break;
    case IR_FMA: v = cg_intrinsic(f, "fma", LLVMTypeOf(a[0]), a, 3); break;
    default: cg_fail(f, "lanes: %s", ir_op_name(s->op)); break;
    }
    f->lanes->g[gi].v = v;
    return v;
}

int cg_lanes_stmt(cg_fn *f, const ir_stmt *s)
{
    struct cg_lanes *l = f->lanes;
    if (!l || !f->fast || s->parent != l->blk)
        return 0;
    int m = cg_smap_get(&l->member, s);
    if (!m)
        return 0;
    if (m > 0)
        return 1; /* grouped: its set emits it */
    const lane_set *ls = &l->set[-m - 1];
    if (s != ls->point)
        return 1; /* stored with the set */
    LLVMValueRef v = group_value(f, ls->root, ls->n);
    if (!v)
        return -1;
    for (int k = 0; k < ls->n; k++) {
        const ir_stmt *st = ls->store[k];
        LLVMValueRef x =
            LLVMBuildExtractElement(f->b, v, LLVMConstInt(f->t_i32, (unsigned)k, 0), "lane");
        if (cg_vmap_put(&f->vals, st->arg[1], x) != 0)
            return cg_fail(f, "out of memory");
        f->cur = st;
        if (cg_emit_global_store(f, st) != 0)
            return -1;
    }
    f->cur = s;
    return 1;
}
