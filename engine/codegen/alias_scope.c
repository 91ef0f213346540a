/* What the fast copies tell LLVM about field memory: the accesses of each field slot get a
 * scope of their own (!alias.scope) and are marked not to alias the other slots' (!noalias),
 * so the optimizer may keep values in registers across stores and vectorize without runtime
 * overlap checks. This holds because slots bound to different fields never share memory
 * (task_abi.h); the fast copy runs only after the per-call check below has seen that every
 * pair of slots with accesses is bound to different fields. The background a read of an
 * inactive element sees lives in the runtime, which no task stores to. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "engine/codegen/cg_internal.h"

#include <stdint.h>

static void make_scopes(cg_fn *f, cg_fast *fast)
{
    LLVMMetadataRef dom_name = LLVMMDStringInContext2(f->ctx, "plume.fields", 12);
    LLVMMetadataRef domain = LLVMMDNodeInContext2(f->ctx, &dom_name, 1);
    int n = f->task->nfields;
    for (int s = 0; s < n; s++) {
        if (!fast->slot_used[s])
            continue;
        char name[32];
        int len = snprintf(name, sizeof name, "plume.slot.%d", s);
        LLVMMetadataRef ops[2] = {LLVMMDStringInContext2(f->ctx, name, (size_t)len), domain};
        fast->scope[s] = LLVMMDNodeInContext2(f->ctx, ops, 2);
    }
    for (int s = 0; s < n; s++) {
        if (!fast->slot_used[s])
            continue;
        LLVMMetadataRef others[64];
        int k = 0;
        for (int t = 0; t < n; t++)
            if (t != s && fast->slot_used[t])
                others[k++] = fast->scope[t];
        fast->scope_md[s] =
            LLVMMetadataAsValue(f->ctx, LLVMMDNodeInContext2(f->ctx, &fast->scope[s], 1));
        fast->noalias_md[s] =
            k ? LLVMMetadataAsValue(f->ctx, LLVMMDNodeInContext2(f->ctx, others, (size_t)k))
              : NULL;
    }
}

LLVMValueRef cg_slots_differ(cg_fn *f, int s, int t)
{
    LLVMValueRef same = LLVMBuildAnd(
        f->b, LLVMBuildICmp(f->b, LLVMIntEQ, cg_runtime(f, s), cg_runtime(f, t), ""),
        LLVMBuildICmp(f->b, LLVMIntEQ, cg_field_id(f, s), cg_field_id(f, t), ""), "samefield");
    return LLVMBuildNot(f->b, same, "");
}

/* Slots whose field the task changes anywhere: stores, atomics, activation and deactivation,
 * through the fast copy's accesses or not. */
static int note_change(ir_stmt *s, void *ud)
{
    uint8_t *ch = ud;
    uint32_t slot = UINT32_MAX;
    if ((s->op == IR_GLOBAL_STORE || s->op == IR_ATOMIC) && s->arg[0]->op == IR_SN_FIELD_PTR)
        slot = s->arg[0]->field;
    else if (((s->op == IR_SN_LOOKUP || s->op == IR_SN_FIELD_PTR) && s->activate) ||
             s->op == IR_SN_ACTIVATE || s->op == IR_SN_DEACTIVATE || s->op == IR_ACTIVATE ||
             s->op == IR_DEACTIVATE)
        slot = s->field;
    if (slot < 64)
        ch[slot] = 1;
    return 0;
}

void cg_changed_slots(const ir_task *t, uint8_t ch[64])
{
    memset(ch, 0, 64);
    ir_walk(t->body, note_change, ch);
}

LLVMValueRef cg_fast_distinct_fields(cg_fn *f, cg_fast *fast)
{
    memset(fast->slot_used, 0, sizeof fast->slot_used);
    for (int i = 0; i < fast->nacc; i++)
        fast->slot_used[fast->acc[i].slot] = 1;
    make_scopes(f, fast);
    /* A slot the task changes without a fast access (a write at I + 2 e, an activation) may
     * be bound to the field a fast access reads: that read's blocks, looked up as the entry
     * starts, and the activity the fast copy answers from them, would miss its changes. */
    uint8_t changes[64];
    cg_changed_slots(f->task, changes);
    LLVMValueRef ok = LLVMConstInt(f->t_i1, 1, 0);
    int n = f->task->nfields < 64 ? (int)f->task->nfields : 64;
    for (int s = 0; s < n; s++)
        for (int t = s + 1; t < n; t++) {
            int both = fast->slot_used[s] && fast->slot_used[t];
            int one = (fast->slot_used[s] && changes[t]) || (fast->slot_used[t] && changes[s]);
            if (!both && !one)
                continue;
            ok = LLVMBuildAnd(f->b, ok, cg_slots_differ(f, s, t), "distinct");
        }
    return ok;
}

void cg_fast_mark_alias(cg_fn *f, LLVMValueRef inst, const ir_stmt *ptr)
{
    if (!f->fast || !inst || !cg_fast_access(f->fast, ptr))
        return;
    int s = ptr->field;
    unsigned scope_kind = LLVMGetMDKindIDInContext(f->ctx, "alias.scope", 11);
    unsigned noalias_kind = LLVMGetMDKindIDInContext(f->ctx, "noalias", 7);
    LLVMSetMetadata(inst, scope_kind, f->fast->scope_md[s]);
    if (f->fast->noalias_md[s])
        LLVMSetMetadata(inst, noalias_kind, f->fast->noalias_md[s]);
}
