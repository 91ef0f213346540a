/* Common subexpression elimination by hash-consing in a scoped table: a statement equal to
 * one seen earlier in its block or in an enclosing block (so one that dominates it) is
 * replaced by that one. Entries of a nested block leave the table when the block ends.
 *
 * What may be shared depends on what the value reads:
 *  - pure values (arithmetic, constants, arguments, loop indices, gtmp_ptr,
 *    sn_root/sn_child/sn_index) always;
 *  - reads of a field's activity (is_active, sn_is_active, sn_lookup and sn_field_ptr with
 *    activate = 0) only while nothing stored to, activated or deactivated cells of that field
 *    in between (the field's "mask epoch"); global_ptr too, since access lowering turns one
 *    that is only read into such lookups at its own place: shared across a store to another
 *    element of the tree, a read after the store would use a lookup made before it (an
 *    inactive block's NULL, though the store activated it). A pointer stored through stays
 *    shareable after its own store;
 *  - loads only while nothing stored to what they read in between: a local variable, the
 *    global temporaries, or the field (the field's "value epoch").
 * Fields are told apart only when the task's slots are bound to distinct fields
 * (ir_task.distinct_slots); otherwise every field shares one pair of epochs. The fused body of
 * several kernels is where this pays: a backtrace through the velocity computed by each of
 * three advection kernels is computed once, though each stores its own result in between.
 * A load through the pointer a store just wrote (same statement, the field's value epoch
 * unchanged since) is the stored value: one fused body's result read back by the next body
 * costs no load. Only pointers that cannot be NULL forward (global_ptr, activating
 * sn_field_ptr): a store through a NULL pointer stores nothing.
 * After access lowering a store changes only values: the activation happened in the
 * activating lookups before it, which change the field's mask epoch themselves.
 * An epoch changes after every statement with an effect on it, after an `if` or loop
 * containing one, and before entering a loop body containing one (a later iteration runs
 * after its effects). Activating lookups are effects and are never dropped for a pure one,
 * but a lookup of a cell that an earlier activating lookup of the same container and index
 * returned is that cell: it stays active until a deactivation (the "deactivation epoch"). */
#include "engine/opt/opt_internal.h"

#include <stdlib.h>
#include <string.h>

enum { K_NONE = -1, K_PURE = 0, K_MASK = 1, K_MEM = 2, K_ACTIVE = 3 };

typedef struct entry {
    ir_stmt *s;
    int kind;         /* K_* the entry was made under */
    uint64_t epoch;
    uint64_t hash;
    int32_t next;     /* previous head of the bucket */
    uint32_t bucket;
} entry;

/* Field slots with epochs of their own; higher slots share the last pair (sharing an epoch
 * only ever loses a match). */
#define CSE_SLOTS 64

typedef struct epochs {
    uint64_t local, gtmp;  /* loads of locals, of the global temporaries */
    uint64_t any;          /* loads through a pointer of unknown origin: every memory effect */
    uint64_t deact;
    uint64_t val[CSE_SLOTS], mask[CSE_SLOTS];
    /* the last store per slot: its pointer and value, and the value epoch it left */
    ir_stmt *st_ptr[CSE_SLOTS], *st_val[CSE_SLOTS];
    uint64_t st_epoch[CSE_SLOTS];
} epochs;

/* What a statement (with everything nested in it) may change. */
typedef struct effects {
    int local, gtmp, deact, all;
    uint64_t vals, masks; /* bit per epoch slot */
} effects;

typedef struct cctx {
    entry *e;
    uint32_t ne, cap;
    int32_t *buckets;
    uint32_t nbuckets;
    uint64_t counter; /* fresh epoch numbers */
    int distinct;     /* ir_task.distinct_slots */
    const ir_task *t; /* for slots placed in one tree: they share a mask epoch */
    epochs ep;        /* current epochs */
    int changed;
} cctx;

static int kind_of(const ir_stmt *s)
{
    switch (s->op) {
    case IR_CONST: case IR_ARG: case IR_UNARY: case IR_BINARY: case IR_SELECT: case IR_CAST:
    case IR_FMA:
    case IR_GTMP_PTR: case IR_LOOP_INDEX: case IR_SN_ROOT: case IR_SN_CHILD: case IR_SN_INDEX:
        return K_PURE;
    case IR_IS_ACTIVE: case IR_SN_IS_ACTIVE: case IR_GLOBAL_PTR:
        return K_MASK;
    case IR_SN_LOOKUP: case IR_SN_FIELD_PTR:
        return s->activate ? K_ACTIVE : K_MASK;
    case IR_LOAD: case IR_GLOBAL_LOAD:
        return K_MEM;
    default:
        return K_NONE;
    }
}

static int commutative(const ir_stmt *s)
{
    if (s->op != IR_BINARY)
        return 0;
    switch (s->sub) {
    case IR_ADD: case IR_MUL: case IR_MIN: case IR_MAX: case IR_AND: case IR_OR: case IR_XOR:
    case IR_EQ: case IR_NE:
        return 1;
    default:
        return 0;
    }
}

/* operands in a canonical order (commutative ops: by statement number) */
static void operands(const ir_stmt *s, ir_stmt *out[IR_MAX_ARGS])
{
    for (int i = 0; i < IR_MAX_ARGS; i++)
        out[i] = i < s->nargs ? s->arg[i] : NULL;
    if (commutative(s) && out[0]->id > out[1]->id) {
        ir_stmt *tmp = out[0];
        out[0] = out[1];
        out[1] = tmp;
    }
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

/* `activate` is left out: an activating lookup's entry (K_ACTIVE) answers both kinds */
static uint64_t hash_of(const ir_stmt *s, int kind, uint64_t epoch)
{
    ir_stmt *a[IR_MAX_ARGS];
    uint64_t fbits;
    memcpy(&fbits, &s->fval, sizeof fbits);
    operands(s, a);
    uint64_t h = mix(0, (uint64_t)s->op | (uint64_t)s->ty << 8 | (uint64_t)s->sub << 16 |
                            (uint64_t)s->nargs << 24 | (uint64_t)s->comp << 32 |
                            (uint64_t)s->level << 40 | (uint64_t)kind << 48);
    h = mix(h, (uint64_t)s->field | (uint64_t)s->index << 16 | (uint64_t)s->demoted << 32);
    h = mix(h, (uint64_t)s->ival);
    h = mix(h, fbits);
    h = mix(h, epoch);
    for (int i = 0; i < s->nargs; i++)
        h = mix(h, a[i]->id);
    if (s->loop)
        h = mix(h, s->loop->id);
    return h;
}

static int same(const ir_stmt *x, const ir_stmt *y)
{
    ir_stmt *a[IR_MAX_ARGS], *b[IR_MAX_ARGS];
    if (x->op != y->op || x->ty != y->ty || x->sub != y->sub || x->nargs != y->nargs ||
        x->comp != y->comp || x->level != y->level || x->field != y->field ||
        x->index != y->index || x->demoted != y->demoted || x->ival != y->ival ||
        memcmp(&x->fval, &y->fval, sizeof x->fval) != 0 || x->loop != y->loop ||
        x->parallel != y->parallel)
        return 0;
    operands(x, a);
    operands(y, b);
    for (int i = 0; i < x->nargs; i++)
        if (a[i] != b[i])
            return 0;
    return 1;
}

static ir_stmt *find(cctx *c, const ir_stmt *s, int kind, uint64_t epoch)
{
    uint64_t h = hash_of(s, kind, epoch);
    for (int32_t i = c->buckets[h & (c->nbuckets - 1)]; i >= 0; i = c->e[i].next) {
        const entry *e = &c->e[i];
        if (e->hash == h && e->kind == kind && e->epoch == epoch && same(e->s, s))
            return e->s;
    }
    return NULL;
}

static void add(cctx *c, ir_stmt *s, int kind, uint64_t epoch)
{
    if (c->ne == c->cap)
        return; /* sized for every statement twice; never reached */
    entry *e = &c->e[c->ne];
    e->s = s;
    e->kind = kind;
    e->epoch = epoch;
    e->hash = hash_of(s, kind, epoch);
    e->bucket = (uint32_t)(e->hash & (c->nbuckets - 1));
    e->next = c->buckets[e->bucket];
    c->buckets[e->bucket] = (int32_t)c->ne++;
}

static void pop_to(cctx *c, uint32_t n)
{
    while (c->ne > n) {
        entry *e = &c->e[--c->ne];
        c->buckets[e->bucket] = e->next;
    }
}

static int slot_of(const cctx *c, uint32_t field)
{
    if (!c->distinct)
        return 0;
    return field < CSE_SLOTS ? (int)field : CSE_SLOTS - 1;
}

/* Slots placed in one tree have one mask: its epoch is kept under the lowest such slot. */
static int mask_slot_of(const cctx *c, uint32_t field)
{
    return slot_of(c, ir_tree_slot(c->t, field));
}

/* The epoch a load's value depends on: that of the memory its pointer names. */
static uint64_t load_epoch(const cctx *c, const ir_stmt *s)
{
    if (s->op == IR_LOAD)
        return c->ep.local;
    const ir_stmt *p = s->arg[0];
    if (p->op == IR_GTMP_PTR)
        return c->ep.gtmp;
    if (p->op == IR_GLOBAL_PTR || p->op == IR_SN_FIELD_PTR)
        return c->ep.val[slot_of(c, p->field)];
    return c->ep.any;
}

static uint64_t epoch_for(const cctx *c, const ir_stmt *s, int kind)
{
    switch (kind) {
    case K_MASK: return c->ep.mask[mask_slot_of(c, s->field)];
    case K_MEM: return load_epoch(c, s);
    case K_ACTIVE: return c->ep.deact;
    default: return 0;
    }
}

static void touch_field(const cctx *c, effects *e, uint32_t field)
{
    e->vals |= 1ull << slot_of(c, field);
    e->masks |= 1ull << mask_slot_of(c, field);
}

/* what a store or an atomic through pointer p changes */
static void touch_ptr(const cctx *c, effects *e, const ir_stmt *p)
{
    if (p->op == IR_ALLOCA)
        e->local = 1;
    else if (p->op == IR_GTMP_PTR)
        e->gtmp = 1;
    else if (p->op == IR_GLOBAL_PTR)
        touch_field(c, e, p->field); /* the store activates the element too */
    else if (p->op == IR_SN_FIELD_PTR)
        e->vals |= 1ull << slot_of(c, p->field);
    else
        e->all = 1;
}

/* An activating lookup changes a mask only on a level that has one: the cells of a dense level
 * exist with their container (the flag then only says the pointer is not NULL). Counting it
 * anyway would end, after every store, the lookups of fields placed in the same tree. */
static int activates_cells(const cctx *c, const ir_stmt *s)
{
    if (s->field >= c->t->nfields)
        return 1;
    const ir_field_info *f = &c->t->fields[s->field];
    return s->level >= f->nlevels || ir_level_is_sparse(&f->levels[s->level]);
}

typedef struct effect_walk {
    const cctx *c;
    effects *e;
} effect_walk;

static int effect_visit(ir_stmt *s, void *ud)
{
    effect_walk *w = ud;
    switch (s->op) {
    case IR_STORE: case IR_GLOBAL_STORE: case IR_ATOMIC:
        touch_ptr(w->c, w->e, s->arg[0]);
        break;
    case IR_DEACTIVATE: case IR_SN_DEACTIVATE:
        w->e->deact = 1;
        touch_field(w->c, w->e, s->field);
        break;
    case IR_ACTIVATE: case IR_SN_ACTIVATE:
        touch_field(w->c, w->e, s->field);
        break;
    case IR_SN_LOOKUP: case IR_SN_FIELD_PTR:
        if (s->activate && activates_cells(w->c, s))
            touch_field(w->c, w->e, s->field);
        break;
    case IR_IF: case IR_RANGE_FOR: case IR_STRUCT_FOR: case IR_WHILE: case IR_BREAK:
    case IR_CONTINUE:
        break; /* control flow: what counts is what runs inside */
    default:
        if (ir_op_has_effect(s))
            w->e->all = 1; /* an effect this pass does not know: it may change anything */
        break;
    }
    return 0;
}

/* after (or, for loops, also before) statement s with an effect */
static void bump(cctx *c, ir_stmt *s)
{
    if (s->op == IR_BREAK || s->op == IR_CONTINUE)
        return; /* nothing after them in the block runs */
    if (!opt_stmt_has_effect(s))
        return;
    effects e = {0};
    effect_walk w = {c, &e};
    effect_visit(s, &w);
    if (s->body)
        ir_walk(s->body, effect_visit, &w);
    if (s->els)
        ir_walk(s->els, effect_visit, &w);
    if (e.local || e.all)
        c->ep.local = ++c->counter;
    if (e.gtmp || e.all)
        c->ep.gtmp = ++c->counter;
    if (e.gtmp || e.vals || e.masks || e.all)
        c->ep.any = ++c->counter;
    if (e.deact || e.all)
        c->ep.deact = ++c->counter;
    for (int i = 0; i < CSE_SLOTS; i++) {
        if (e.all || (e.vals >> i & 1))
            c->ep.val[i] = ++c->counter;
        if (e.all || (e.masks >> i & 1))
            c->ep.mask[i] = ++c->counter;
    }
}

static void block(cctx *c, ir_block *b);

/* Pointers a store always writes through (see the top of the file). */
static int forwards(const ir_stmt *p)
{
    return p->op == IR_GLOBAL_PTR || (p->op == IR_SN_FIELD_PTR && p->activate);
}

/* The value the last store through s's pointer left, if nothing changed the field since. */
static ir_stmt *stored_value(const cctx *c, const ir_stmt *s)
{
    if (s->op != IR_GLOBAL_LOAD)
        return NULL;
    const ir_stmt *p = s->arg[0];
    if (p->op != IR_GLOBAL_PTR && p->op != IR_SN_FIELD_PTR)
        return NULL;
    int i = slot_of(c, p->field);
    ir_stmt *v = c->ep.st_val[i];
    return c->ep.st_ptr[i] == p && c->ep.st_epoch[i] == c->ep.val[i] && v && v->ty == s->ty
               ? v
               : NULL;
}

static void stmt(cctx *c, ir_stmt *s)
{
    for (int i = 0; i < s->nargs; i++)
        s->arg[i] = ir_resolve(s->arg[i]);
    int kind = kind_of(s);
    if (kind == K_MEM) {
        ir_stmt *v = stored_value(c, s);
        if (v) {
            opt_replace(s, v);
            c->changed++;
            return;
        }
    }
    if (kind == K_PURE || kind == K_MASK || kind == K_MEM) {
        uint64_t ep = epoch_for(c, s, kind);
        ir_stmt *e = find(c, s, kind, ep);
        if (!e && kind == K_MASK && s->op >= IR_SN_LOOKUP)
            e = find(c, s, K_ACTIVE, c->ep.deact);
        if (e) {
            opt_replace(s, e);
            c->changed++;
            return;
        }
        add(c, s, kind, ep);
        return;
    }
    if (kind == K_ACTIVE) {
        ir_stmt *e = find(c, s, K_ACTIVE, c->ep.deact);
        if (e) {
            opt_replace(s, e); /* the cell is active already: the lookup activates nothing */
            c->changed++;
            return;
        }
        bump(c, s);
        add(c, s, K_ACTIVE, c->ep.deact);
        return;
    }
    if (s->op == IR_IF) {
        epochs saved = c->ep;
        uint32_t h = c->ne;
        block(c, s->body);
        pop_to(c, h);
        c->ep = saved;
        block(c, s->els);
        pop_to(c, h);
        c->ep = saved;
        bump(c, s);
        return;
    }
    if (ir_op_is_loop(s->op)) {
        bump(c, s);
        uint32_t h = c->ne;
        block(c, s->body);
        pop_to(c, h);
        bump(c, s);
        return;
    }
    bump(c, s);
    if ((s->op == IR_GLOBAL_STORE || s->op == IR_ATOMIC) && s->arg[0]->op == IR_GLOBAL_PTR)
        /* the pointer written through stays good for its element, which is active now (it
         * lowers to an activating lookup); other pointers into the tree made before do not */
        add(c, s->arg[0], K_MASK, epoch_for(c, s->arg[0], K_MASK));
    if (s->op == IR_GLOBAL_STORE && forwards(s->arg[0])) {
        int i = slot_of(c, s->arg[0]->field);
        c->ep.st_ptr[i] = s->arg[0];
        c->ep.st_val[i] = s->arg[1];
        c->ep.st_epoch[i] = c->ep.val[i];
    }
}

static void block(cctx *c, ir_block *b)
{
    for (ir_stmt *s = b->first, *next; s; s = next) {
        next = s->next;
        stmt(c, s);
    }
}

int opt_cse(ir_task *t)
{
    uint32_t n = ir_task_number(t);
    cctx c = {0};
    c.distinct = t->distinct_slots;
    c.t = t;
    c.cap = 2 * n + 2;
    c.nbuckets = 64;
    while (c.nbuckets < 2 * n)
        c.nbuckets *= 2;
    c.e = malloc(c.cap * sizeof *c.e);
    c.buckets = malloc(c.nbuckets * sizeof *c.buckets);
    if (!c.e || !c.buckets) {
        free(c.e);
        free(c.buckets);
        return -1;
    }
    for (uint32_t i = 0; i < c.nbuckets; i++)
        c.buckets[i] = -1;
    block(&c, t->body);
    free(c.e);
    free(c.buckets);
    if (c.changed)
        ir_task_replace_uses(t);
    return c.changed;
}
