/* ports.c — a kernel's parameter list flattened for the plugin's node ports. */
#include "engine/lang/lang.h"

uint32_t pk_kernel_ports(const pk_func *kernel, pk_port *out, uint32_t cap) {
    if (!kernel)
        return 0;
    for (uint32_t i = 0; i < kernel->nparams && i < cap && out; i++) {
        const pk_var *p = kernel->params[i];
        pk_port *o = &out[i];
        o->name = p->name;
        o->is_field = p->type.kind == PK_T_FIELD;
        o->type = o->is_field ? p->type.elem : p->type.kind;
        o->dim = o->is_field ? p->type.dim : 0;
        o->access = o->is_field ? p->field_access : 0;
    }
    return kernel->nparams;
}
