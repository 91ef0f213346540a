/* ir_task_meta -> sfg_task_meta (see sfg_ir_meta.h). The flags are the same concepts; the IR
 * splits "element-wise" and "unique" where the SFG's UNIQUE (addr 0) means both. */
#include "engine/sfg/sfg_ir_meta.h"

#include <string.h>

static int field_of(const sfg_ir_binding *b, uint32_t slot, uint32_t *id) {
    if (!b || slot >= b->n_fields || !b->field_id)
        return SFG_EINVAL;
    *id = b->field_id[slot];
    return SFG_OK;
}

static int snode_of(const sfg_ir_binding *b, uint32_t slot, uint32_t level, uint32_t *id) {
    uint32_t f;
    if (level >= 16 || field_of(b, slot, &f))
        return SFG_EINVAL;
    if (b->tree_id)
        f = b->tree_id[slot];
    *id = SFG_SNODE_ID(f, level);
    return SFG_OK;
}

static sfg_access map_access(const ir_access *a, sfg_state s) {
    uint32_t fl = 0;
    if (a->flags & IR_ACC_READ)
        fl |= SFG_ACC_READ;
    if (a->flags & IR_ACC_WRITE)
        fl |= SFG_ACC_WRITE;
    if ((a->flags & IR_ACC_ELEMENTWISE) && (a->flags & IR_ACC_UNIQUE))
        fl |= SFG_ACC_UNIQUE;
    if (a->flags & IR_ACC_ATOMIC)
        fl |= SFG_ACC_ATOMIC;
    if (a->flags & IR_ACC_COVER)
        fl |= SFG_ACC_COVER;
    if (a->flags & IR_ACC_FULL)
        fl |= SFG_ACC_FULL;
    if (a->flags & IR_ACC_INDEX_ONLY)
        fl |= SFG_ACC_INDEX_ONLY;
    if (a->flags & IR_ACC_LOOKUP)
        fl |= SFG_ACC_LOOKUP;
    if (a->flags & IR_ACC_AT_INDEX)
        fl |= SFG_ACC_AT_INDEX;
    if (a->flags & IR_ACC_AT_EVERY_INDEX)
        fl |= SFG_ACC_AT_EVERY_INDEX;
    return (sfg_access){.state = s, .flags = fl, .addr = 0, .op = a->atomic_op};
}

/* Flags that describe only a task's activations: a slot that activates nothing neither has
 * nor breaks them. */
#define ACTIVATION_FLAGS (SFG_ACC_INDEX_ONLY | SFG_ACC_AT_INDEX | SFG_ACC_AT_EVERY_INDEX)

/* Two slots aliasing one field, or two fields in one tree (one mask state): a property that
 * holds for the state must hold for both. */
static void merge(sfg_access *into, const sfg_access *a) {
    uint32_t rw = (into->flags | a->flags) & (SFG_ACC_READ | SFG_ACC_WRITE);
    uint32_t both = into->flags & a->flags & ~(uint32_t)(SFG_ACC_READ | SFG_ACC_WRITE);
    if (!(into->flags & SFG_ACC_WRITE))
        both |= a->flags & ACTIVATION_FLAGS;
    else if (!(a->flags & SFG_ACC_WRITE))
        both |= into->flags & ACTIVATION_FLAGS;
    else if (both & SFG_ACC_AT_INDEX) /* one slot's every-iteration activation covers both */
        both |= (into->flags | a->flags) & SFG_ACC_AT_EVERY_INDEX;
    if ((both & SFG_ACC_ATOMIC) && into->op != a->op)
        both &= ~(uint32_t)SFG_ACC_ATOMIC;
    if (rw & SFG_ACC_READ)
        both &= ~(uint32_t)SFG_ACC_FULL; /* FULL means the old version is never read */
    into->flags = rw | both;
}

int sfg_meta_from_ir(const ir_task_meta *im, const sfg_ir_binding *b, sfg_access *buf,
                     uint32_t cap, sfg_task_meta *out) {
    if (!im || !out || im->kind >= SFG_TASK_TYPE_COUNT || (im->naccess && !im->access))
        return SFG_EINVAL;
    memset(out, 0, sizeof *out);
    out->type = (sfg_task_type)im->kind;
    out->flags = (im->flags & IR_TASKF_DYNAMIC_RANGE) ? SFG_TASK_DYNAMIC_RANGE : 0;
    out->begin = im->begin;
    out->end = im->end;
    if (im->kind == IR_TASK_STRUCT_FOR || im->kind == IR_TASK_CLEAR_LIST ||
        im->kind == IR_TASK_LISTGEN || im->kind == IR_TASK_GC) {
        if (snode_of(b, im->field, im->level, &out->snode))
            return SFG_EINVAL;
    }
    uint32_t n = 0;
    for (uint32_t i = 0; i < im->naccess; i++) {
        const ir_access *a = &im->access[i];
        uint32_t id;
        sfg_state s;
        switch (a->kind) {
        case IR_STATE_VALUE:
            if (field_of(b, a->field, &id))
                return SFG_EINVAL;
            s = SFG_STATE(SFG_VALUE, id);
            break;
        case IR_STATE_GTMP:
            if (!b)
                return SFG_EINVAL;
            s = SFG_STATE(SFG_VALUE, b->gtmp_state);
            break;
        case IR_STATE_MASK:
        case IR_STATE_LIST:
        case IR_STATE_ALLOC:
            if (snode_of(b, a->field, a->level, &id))
                return SFG_EINVAL;
            s = SFG_STATE(a->kind == IR_STATE_MASK   ? SFG_MASK
                          : a->kind == IR_STATE_LIST ? SFG_LIST
                                                     : SFG_ALLOC,
                          id);
            break;
        default:
            return SFG_EINVAL;
        }
        sfg_access m = map_access(a, s);
        uint32_t j = 0;
        while (j < n && buf[j].state != s)
            j++;
        if (j < n) {
            merge(&buf[j], &m);
            continue;
        }
        if (n >= cap)
            return SFG_EINVAL;
        buf[n++] = m;
    }
    out->n_access = n;
    out->access = buf;
    return SFG_OK;
}
