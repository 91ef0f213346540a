/* The adapter from the IR's offload metadata to the SFG's: slots through the binding, SNodes
 * as (field, level), flags, aliasing slots merged, bad input refused. */
#include "tests/check.h"
#include "engine/sfg/sfg_ir_meta.h"

static const sfg_access *find(const sfg_task_meta *m, sfg_state s) {
    for (uint32_t i = 0; i < m->n_access; i++)
        if (m->access[i].state == s)
            return &m->access[i];
    return NULL;
}

int main(void) {
    ir_access acc[] = {
        {.kind = IR_STATE_LIST, .field = 0, .level = 2, .flags = IR_ACC_READ},
        {.kind = IR_STATE_VALUE, .field = 0,
         .flags = IR_ACC_READ | IR_ACC_WRITE | IR_ACC_ELEMENTWISE | IR_ACC_UNIQUE | IR_ACC_COVER},
        {.kind = IR_STATE_VALUE, .field = 1, .flags = IR_ACC_READ | IR_ACC_ELEMENTWISE},
        {.kind = IR_STATE_VALUE, .field = 2, .flags = IR_ACC_READ | IR_ACC_ELEMENTWISE | IR_ACC_UNIQUE},
        {.kind = IR_STATE_MASK, .field = 3, .level = 1, .atomic_op = IR_ATOMIC_ACTIVATE,
         .flags = IR_ACC_READ | IR_ACC_WRITE | IR_ACC_ATOMIC | IR_ACC_INDEX_ONLY},
        {.kind = IR_STATE_GTMP, .flags = IR_ACC_WRITE},
    };
    ir_task_meta im = {.kind = IR_TASK_STRUCT_FOR, .field = 0, .level = 2,
                       .naccess = sizeof acc / sizeof acc[0], .access = acc};
    const uint32_t ids[] = {5, 9, 5, 11}; /* slots 0 and 2 are the same field */
    sfg_ir_binding b = {.field_id = ids, .n_fields = 4, .gtmp_state = 1000};
    sfg_access buf[8];
    sfg_task_meta m;
    CHECK_EQ(sfg_meta_from_ir(&im, &b, buf, 8, &m), SFG_OK);
    CHECK_EQ(m.type, SFG_STRUCT_FOR);
    CHECK_EQ(m.snode, SFG_SNODE_ID(5, 2));
    CHECK_EQ(m.n_access, 5);
    const sfg_access *a = find(&m, SFG_STATE(SFG_LIST, SFG_SNODE_ID(5, 2)));
    CHECK(a && a->flags == SFG_ACC_READ);
    a = find(&m, SFG_STATE(SFG_VALUE, 5)); /* merged: COVER held by one slot only */
    CHECK(a && a->flags == (SFG_ACC_READ | SFG_ACC_WRITE | SFG_ACC_UNIQUE) && a->addr == 0);
    a = find(&m, SFG_STATE(SFG_VALUE, 9)); /* element-wise but not unique */
    CHECK(a && a->flags == SFG_ACC_READ);
    a = find(&m, SFG_STATE(SFG_MASK, SFG_SNODE_ID(11, 1)));
    CHECK(a && a->flags == (SFG_ACC_READ | SFG_ACC_WRITE | SFG_ACC_ATOMIC | SFG_ACC_INDEX_ONLY));
    CHECK(a && a->op == IR_ATOMIC_ACTIVATE);
    a = find(&m, SFG_STATE(SFG_VALUE, 1000));
    CHECK(a && a->flags == SFG_ACC_WRITE);

    /* range_for bounds and the dynamic flag */
    ir_task_meta rf = {.kind = IR_TASK_RANGE_FOR, .begin = 3, .end = 40,
                       .flags = IR_TASKF_DYNAMIC_RANGE};
    CHECK_EQ(sfg_meta_from_ir(&rf, &b, buf, 8, &m), SFG_OK);
    CHECK(m.type == SFG_RANGE_FOR && m.begin == 3 && m.end == 40);
    CHECK(m.flags & SFG_TASK_DYNAMIC_RANGE);

    /* refused: a whole kernel, an unbound slot, a level out of range, no room */
    ir_task_meta k = {.kind = IR_TASK_KERNEL};
    CHECK_EQ(sfg_meta_from_ir(&k, &b, buf, 8, &m), SFG_EINVAL);
    sfg_ir_binding small = {.field_id = ids, .n_fields = 2, .gtmp_state = 1000};
    CHECK_EQ(sfg_meta_from_ir(&im, &small, buf, 8, &m), SFG_EINVAL);
    ir_task_meta deep = {.kind = IR_TASK_LISTGEN, .field = 0, .level = 16};
    CHECK_EQ(sfg_meta_from_ir(&deep, &b, buf, 8, &m), SFG_EINVAL);
    CHECK_EQ(sfg_meta_from_ir(&im, &b, buf, 3, &m), SFG_EINVAL);
    CHECK_DONE();
}
