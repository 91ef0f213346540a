/* Node instances: parameters, port bindings, and cooking one node. */
#define _GNU_SOURCE
#include "plugin/handles.h"
#include "plugin/plugin.h"
#include "engine/kernel.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

pl_node *pl_node_get(const plume_node *node) { return handle_get((uintptr_t)node, HK_NODE); }

#define GET_NODE(var, handle)                                                                   \
    pl_node *var = pl_node_get(handle);                                                         \
    if (!var)                                                                                   \
        return pl_fail(NULL, PLUME_ERR_INVALID_HANDLE,                                         \
                       "%s: invalid node handle (NULL, destroyed, or not a node)", __func__ + 3); \
    if (pl_in_callback(var->ctx))                                                               \
        return pl_refuse_in_callback(var->ctx, __func__ + 3)

static const char *type_name(plume_param_type t)
{
    static const char *names[] = {"bool", "int", "float", "vec3", "enum", "string", "file path", "code"};
    return t >= 0 && t <= PLUME_PARAM_CODE ? names[t] : "?";
}

static int param_index(const pl_node *n, const char *id)
{
    for (uint32_t i = 0; id && i < n->type->desc.param_count; i++)
        if (!strcmp(n->type->desc.params[i].id, id))
            return (int)i;
    return -1;
}

static int name_taken(const pl_context *ctx, const char *name)
{
    for (uint32_t i = 0; i < ctx->nnodes; i++)
        if (!strcmp(ctx->nodes[i]->name, name))
            return 1;
    return 0;
}

/* A node's name keys its own fields ("<name>:pressure"), so two live nodes of one context never
 * share one: a taken name (two unnamed nodes of a type, say) gets "#2", "#3", ... (NULL when out
 * of memory). */
static char *unique_name(pl_context *ctx, const char *want)
{
    if (!name_taken(ctx, want))
        return strdup(want);
    size_t n = strlen(want) + 16;
    char *s = malloc(n);
    for (unsigned k = 2; s; k++) {
        snprintf(s, n, "%s#%u", want, k);
        if (!name_taken(ctx, s)) {
            pl_log(ctx, PLUME_LOG_INFO, "node name '%s' is taken in this context; this node is '%s'", want, s);
            break;
        }
    }
    return s;
}

static int predecessor_field(eng_field *f, const char *name, size_t len)
{
    const char *fn = f ? eng_field_info(f)->name : NULL;
    return fn && !strncmp(fn, name, len) && fn[len] == ':';
}

/* A new node starts with its own state: fields "<name>:*" that a destroyed node of the same
 * name left (a warm-started pressure, a loaded emitter shape) are cleared, not inherited.
 * Clearing waits for the queued work, whose error (a budget, the host's cancel) is returned
 * here rather than lost. */
static plume_status forget_predecessor(pl_context *ctx, const char *name)
{
    uint32_t r = 0;
    while (r < ctx->nretired && strcmp(ctx->retired[r], name))
        r++;
    if (r == ctx->nretired)
        return PLUME_OK; /* no node of this name went: its fields, if any, are a checkpoint's */
    free(ctx->retired[r]);
    ctx->retired[r] = ctx->retired[--ctx->nretired];
    size_t len = strlen(name);
    int any = 0;
    for (int i = 0; i < eng_field_count(ctx->eng); i++)
        any |= predecessor_field(eng_field_at(ctx->eng, i), name, len);
    if (!any)
        return PLUME_OK;
    int rc = eng_sync(ctx->eng);
    if (rc)
        return pl_from_engine(ctx, rc);
    for (int i = 0; i < eng_field_count(ctx->eng); i++)
        if (predecessor_field(eng_field_at(ctx->eng, i), name, len))
            eng_field_clear(ctx->eng, eng_field_at(ctx->eng, i));
    return PLUME_OK;
}

plume_status pl_node_create(plume_context *handle, const char *type_id, const char *name,
                            plume_node **out)
{
    pl_context *ctx = pl_context_get(handle);
    if (!ctx)
        return pl_fail(NULL, PLUME_ERR_INVALID_HANDLE, "node_create: invalid context handle");
    if (pl_in_callback(ctx))
        return pl_refuse_in_callback(ctx, "node_create");
    if (!out)
        return pl_fail(ctx, PLUME_ERR_INVALID_ARGUMENT, "node_create: out is NULL");
    *out = NULL;
    const pl_node_type *t = pl_registry_find(type_id);
    if (!t)
        return pl_fail(ctx, PLUME_ERR_NOT_FOUND, "node_create: unknown node type '%s' (see `plume nodes`)",
                       type_id ? type_id : "(null)");
    /* "<name>:what" names a node's own fields: a ':' in a name would reach another's */
    if (name && strchr(name, ':'))
        return pl_fail(ctx, PLUME_ERR_INVALID_ARGUMENT, "node_create: node name '%s': ':' is not allowed in names",
                       name);
    /* the node's own fields are "<name>:what": a name past this would cut them short and two
     * nodes of one long prefix would share them */
    if (name && strlen(name) > PL_NODE_NAME_MAX)
        return pl_fail(ctx, PLUME_ERR_INVALID_ARGUMENT, "node_create: node name '%.40s...' has %zu bytes; at most %d",
                       name, strlen(name), PL_NODE_NAME_MAX);
    char *final = unique_name(ctx, name && name[0] ? name : t->desc.id);
    if (!final)
        return pl_fail(ctx, PLUME_ERR_INTERNAL, "node_create: out of host memory");
    plume_status fst = forget_predecessor(ctx, final);
    if (fst != PLUME_OK) {
        free(final);
        return fst;
    }
    pl_node *n = calloc(1, sizeof *n);
    if (!n) {
        free(final);
        return pl_fail(ctx, PLUME_ERR_INTERNAL, "node_create: out of host memory");
    }
    n->ctx = ctx;
    n->type = t;
    n->name = final;
    n->values = calloc(t->desc.param_count ? t->desc.param_count : 1, sizeof *n->values);
    n->nports = t->desc.port_count;
    n->ports = t->desc.ports;
    n->bindings = calloc(n->nports ? n->nports : 1, sizeof *n->bindings);
    int ok = n->name && n->values && n->bindings;
    for (uint32_t i = 0; ok && i < t->desc.param_count; i++) {
        const plume_param_desc *p = &t->desc.params[i];
        n->values[i].num = p->default_number;
        memcpy(n->values[i].vec, p->default_vec3, sizeof n->values[i].vec);
        n->values[i].str = strdup(p->default_string ? p->default_string : "");
        ok = n->values[i].str != NULL;
    }
    if (ok && ctx->nnodes == ctx->capnodes) {
        uint32_t ncap = ctx->capnodes ? ctx->capnodes * 2 : 16;
        pl_node **grown = realloc(ctx->nodes, ncap * sizeof *grown);
        if (grown) {
            ctx->nodes = grown;
            ctx->capnodes = ncap;
        } else {
            ok = 0;
        }
    }
    if (ok)
        n->handle = handle_new(HK_NODE, n);
    if (!ok || !n->handle) {
        pl_node_free(n);
        return pl_fail(ctx, PLUME_ERR_INTERNAL, "node_create: out of host memory");
    }
    ctx->nodes[ctx->nnodes++] = n;
    *out = (plume_node *)n->handle;
    return PLUME_OK;
}

void pl_node_free(pl_node *n)
{
    if (!n)
        return;
    if (n->handle)
        handle_drop(n->handle);
    if (n->free_state)
        n->free_state(n->state);
    for (uint32_t i = 0; n->values && i < n->type->desc.param_count; i++)
        free(n->values[i].str);
    for (uint32_t i = 0; n->bindings && i < n->nports; i++)
        free(n->bindings[i]);
    free(n->values);
    free(n->bindings);
    free(n->name);
    free(n);
}

void pl_node_destroy(plume_node *handle)
{
    pl_node *n = pl_node_get(handle);
    if (!n)
        return;
    pl_context *ctx = n->ctx;
    if (pl_in_callback(ctx)) { /* it may be the node whose cook called the host */
        pl_refuse_in_callback(ctx, "node_destroy");
        return;
    }
    for (uint32_t i = 0; i < ctx->nnodes; i++)
        if (ctx->nodes[i] == n) {
            ctx->nodes[i] = ctx->nodes[--ctx->nnodes];
            break;
        }
    /* out of memory: the name is not kept, and a successor keeps the fields (warm start) */
    char **grown = realloc(ctx->retired, (ctx->nretired + 1) * sizeof *grown);
    if (grown) {
        ctx->retired = grown;
        if ((ctx->retired[ctx->nretired] = strdup(n->name)))
            ctx->nretired++;
    }
    pl_node_free(n);
}

void pl_context_forget_retired(pl_context *ctx)
{
    for (uint32_t i = 0; i < ctx->nretired; i++)
        free(ctx->retired[i]);
    free(ctx->retired);
    ctx->retired = NULL;
    ctx->nretired = 0;
}

/* Finds parameter `id` and checks its type; on failure records the error and returns -1. */
static int lookup_param(pl_node *n, const char *id, plume_param_type want, const char *setter,
                        plume_status *st)
{
    if (!id) {
        *st = pl_fail(n->ctx, PLUME_ERR_INVALID_ARGUMENT, "%s: the parameter name is NULL", setter);
        return -1;
    }
    int i = param_index(n, id);
    if (i < 0) {
        *st = pl_fail(n->ctx, PLUME_ERR_NOT_FOUND, "node '%s' (%s) has no parameter '%s'", n->name,
                      n->type->desc.id, id);
        return -1;
    }
    plume_param_type have = n->type->desc.params[i].type;
    int ok = have == want ||
             (want == PLUME_PARAM_STRING && (have == PLUME_PARAM_ENUM || have == PLUME_PARAM_FILE_PATH ||
                                             have == PLUME_PARAM_CODE));
    if (!ok) {
        *st = pl_fail(n->ctx, PLUME_ERR_TYPE_MISMATCH,
                      "node '%s': parameter '%s' is a %s; %s cannot set it", n->name, id,
                      type_name(have), setter);
        return -1;
    }
    return i;
}

static plume_status changed(pl_node *n, int i)
{
    return n->type->param_changed ? n->type->param_changed(n, (uint32_t)i) : PLUME_OK;
}

plume_status pl_node_set_ports(pl_node *n, const plume_port_desc *ports, uint32_t count)
{
    char **b = calloc(count ? count : 1, sizeof *b);
    if (!b)
        return pl_fail(n->ctx, PLUME_ERR_INTERNAL, "out of host memory");
    for (uint32_t i = 0; i < count; i++)
        for (uint32_t j = 0; j < n->nports; j++)
            if (n->bindings[j] && !strcmp(ports[i].id, n->ports[j].id)) {
                b[i] = n->bindings[j];
                n->bindings[j] = NULL;
            }
    for (uint32_t j = 0; j < n->nports; j++)
        free(n->bindings[j]);
    free(n->bindings);
    n->bindings = b;
    n->ports = ports;
    n->nports = count;
    return PLUME_OK;
}

static plume_status check_range(pl_node *n, const plume_param_desc *p, double v)
{
    if (!isfinite(v))
        return pl_fail(n->ctx, PLUME_ERR_OUT_OF_RANGE, "node '%s': parameter '%s' must be finite",
                       n->name, p->id);
    if ((p->flags & PLUME_PARAM_FLAG_HAS_HARD_RANGE) && (v < p->hard_min || v > p->hard_max))
        return pl_fail(n->ctx, PLUME_ERR_OUT_OF_RANGE,
                       "node '%s': parameter '%s' = %g is outside its range [%g, %g]", n->name,
                       p->id, v, p->hard_min, p->hard_max);
    return PLUME_OK;
}

plume_status pl_node_set_bool(plume_node *handle, const char *param, int32_t v)
{
    GET_NODE(n, handle);
    plume_status st;
    if (param_index(n, param) < 0 && n->type->set_extra) {
        double d[3] = {v ? 1 : 0, 0, 0};
        return n->type->set_extra(n, param, PLUME_PARAM_BOOL, d, NULL);
    }
    int i = lookup_param(n, param, PLUME_PARAM_BOOL, "set_bool", &st);
    if (i < 0)
        return st;
    n->values[i].num = v ? 1 : 0;
    return changed(n, i);
}

plume_status pl_node_set_int(plume_node *handle, const char *param, int64_t v)
{
    GET_NODE(n, handle);
    plume_status st;
    if (param_index(n, param) < 0 && n->type->set_extra) {
        double d[3] = {(double)v, 0, 0};
        return n->type->set_extra(n, param, PLUME_PARAM_INT, d, NULL);
    }
    int i = lookup_param(n, param, PLUME_PARAM_INT, "set_int", &st);
    if (i < 0)
        return st;
    if ((st = check_range(n, &n->type->desc.params[i], (double)v)) != PLUME_OK)
        return st;
    n->values[i].num = (double)v;
    return changed(n, i);
}

plume_status pl_node_set_float(plume_node *handle, const char *param, double v)
{
    GET_NODE(n, handle);
    plume_status st;
    if (param_index(n, param) < 0 && n->type->set_extra) {
        double d[3] = {v, 0, 0};
        return n->type->set_extra(n, param, PLUME_PARAM_FLOAT, d, NULL);
    }
    int i = lookup_param(n, param, PLUME_PARAM_FLOAT, "set_float", &st);
    if (i < 0)
        return st;
    if ((st = check_range(n, &n->type->desc.params[i], v)) != PLUME_OK)
        return st;
    n->values[i].num = v;
    return changed(n, i);
}

plume_status pl_node_set_vec3(plume_node *handle, const char *param, const double v[3])
{
    GET_NODE(n, handle);
    plume_status st;
    if (param_index(n, param) < 0 && n->type->set_extra) {
        if (!v)
            return pl_fail(n->ctx, PLUME_ERR_INVALID_ARGUMENT, "node '%s': set_vec3 of '%s' with NULL", n->name, param);
        return n->type->set_extra(n, param, PLUME_PARAM_VEC3, v, NULL);
    }
    int i = lookup_param(n, param, PLUME_PARAM_VEC3, "set_vec3", &st);
    if (i < 0)
        return st;
    if (!v)
        return pl_fail(n->ctx, PLUME_ERR_INVALID_ARGUMENT, "node '%s': set_vec3 of '%s' with NULL",
                       n->name, param);
    for (int c = 0; c < 3; c++)
        if ((st = check_range(n, &n->type->desc.params[i], v[c])) != PLUME_OK)
            return st;
    memcpy(n->values[i].vec, v, sizeof n->values[i].vec);
    return changed(n, i);
}

plume_status pl_node_set_string(plume_node *handle, const char *param, const char *v)
{
    GET_NODE(n, handle);
    plume_status st;
    if (param_index(n, param) < 0 && n->type->set_extra) {
        if (!v)
            return pl_fail(n->ctx, PLUME_ERR_INVALID_ARGUMENT, "node '%s': set_string of '%s' with NULL", n->name, param);
        return n->type->set_extra(n, param, PLUME_PARAM_STRING, NULL, v);
    }
    int i = lookup_param(n, param, PLUME_PARAM_STRING, "set_string", &st);
    if (i < 0)
        return st;
    if (!v)
        return pl_fail(n->ctx, PLUME_ERR_INVALID_ARGUMENT, "node '%s': set_string of '%s' with NULL",
                       n->name, param);
    const plume_param_desc *p = &n->type->desc.params[i];
    if (p->type == PLUME_PARAM_ENUM) {
        int found = 0;
        for (uint32_t k = 0; k < p->enum_count; k++)
            found |= !strcmp(p->enum_items[k], v);
        if (!found) {
            char list[512];
            size_t k = 0;
            list[0] = 0;
            for (uint32_t c = 0; c < p->enum_count && k < sizeof list; c++) {
                int w = snprintf(list + k, sizeof list - k, "%s%s", c ? ", " : "", p->enum_items[c]);
                k += w > 0 ? (size_t)w : 0;
            }
            return pl_fail(n->ctx, PLUME_ERR_OUT_OF_RANGE, "node '%s': '%s' is not a choice of '%s' (%s)",
                           n->name, v, param, list);
        }
    }
    char *copy = strdup(v);
    if (!copy)
        return pl_fail(n->ctx, PLUME_ERR_INTERNAL, "out of host memory");
    free(n->values[i].str);
    n->values[i].str = copy;
    return changed(n, i);
}

plume_status pl_node_bind(plume_node *handle, const char *port, const char *field)
{
    GET_NODE(n, handle);
    if (!port || !field)
        return pl_fail(n->ctx, PLUME_ERR_INVALID_ARGUMENT, "node '%s': bind needs a port and a field name",
                       n->name);
    for (uint32_t i = 0; i < n->nports; i++) {
        if (strcmp(n->ports[i].id, port))
            continue;
        /* "" leaves an optional port out even where its default field exists (an export
         * that should not write temperature) */
        if (!field[0] && !n->ports[i].optional)
            return pl_fail(n->ctx, PLUME_ERR_INVALID_ARGUMENT,
                           "node '%s' (%s): port '%s' is required: it cannot be left unbound",
                           n->name, n->type->desc.id, port);
        char *copy = strdup(field);
        if (!copy)
            return pl_fail(n->ctx, PLUME_ERR_INTERNAL, "out of host memory");
        free(n->bindings[i]);
        n->bindings[i] = copy;
        return PLUME_OK;
    }
    return pl_fail(n->ctx, PLUME_ERR_NOT_FOUND, "node '%s' (%s) has no port '%s'", n->name,
                   n->type->desc.id, port);
}

plume_status pl_node_port_count(plume_node *handle, uint32_t *out)
{
    GET_NODE(n, handle);
    if (!out)
        return pl_fail(n->ctx, PLUME_ERR_INVALID_ARGUMENT, "node_port_count: out is NULL");
    *out = n->nports;
    return PLUME_OK;
}

plume_status pl_node_port(plume_node *handle, uint32_t i, const plume_port_desc **out)
{
    GET_NODE(n, handle);
    if (!out)
        return pl_fail(n->ctx, PLUME_ERR_INVALID_ARGUMENT, "node_port: out is NULL");
    if (i >= n->nports)
        return pl_fail(n->ctx, PLUME_ERR_OUT_OF_RANGE, "node_port: index %u but node '%s' has %u ports",
                       i, n->name, n->nports);
    *out = &n->ports[i];
    return PLUME_OK;
}

double pl_param_num(const pl_node *n, const char *id)
{
    int i = param_index(n, id);
    return i < 0 ? 0.0 : n->values[i].num;
}

const double *pl_param_vec3(const pl_node *n, const char *id)
{
    static const double zero[3];
    int i = param_index(n, id);
    return i < 0 ? zero : n->values[i].vec;
}

const char *pl_param_str(const pl_node *n, const char *id)
{
    int i = param_index(n, id);
    return i < 0 ? "" : n->values[i].str;
}

/* The checks made before a node does any work (its cook, and plume.validate/1): ports bound
 * to declared fields of their kind, no written field on a second port, and the type's own
 * (a kernel node: its code and the dimensions of its fields). fields[i] gets port i's field.
 * Validating, a port bound to a scratch field not made yet (a name with ':') is passed over. */
static plume_status node_checks(pl_node *n, eng_field **fields, int validating)
{
    pl_context *ctx = n->ctx;
    plume_status st = PLUME_OK;
    for (uint32_t i = 0; i < n->nports && st == PLUME_OK; i++) {
        const plume_port_desc *p = &n->ports[i];
        const char *name = n->bindings[i] ? n->bindings[i] : p->default_field;
        if (!name || !name[0]) {
            if (!p->optional)
                st = pl_fail(ctx, PLUME_ERR_MISSING_INPUT, "node '%s': port '%s' is not bound to a field",
                             n->name, p->id);
            continue;
        }
        fields[i] = eng_field_find(ctx->eng, name);
        if (!fields[i] && validating && strchr(name, ':'))
            continue; /* a scratch field, made by the cook of the node that owns it */
        if (!fields[i]) {
            if (!p->optional || n->bindings[i])
                st = pl_fail(ctx, PLUME_ERR_MISSING_INPUT,
                             "node '%s': port '%s' is bound to field '%s', which is not declared",
                             n->name, p->id, name);
            continue;
        }
        int want = p->value_type == PLUME_VALUE_VEC3 ? 3 : 1;
        if (eng_field_components(fields[i]) != want)
            st = pl_fail(ctx, PLUME_ERR_TYPE_MISMATCH, "node '%s': port '%s' needs a %s field but '%s' is a %s field",
                         n->name, p->id, want == 3 ? "vec3" : "f32", name, want == 3 ? "f32" : "vec3");
    }
    /* A field written through one port and also bound to another would be read while it is
     * overwritten (a stencil reads neighbours it already changed): kernels assume their field
     * parameters never alias, and no node reads such a pair in a defined order. */
    for (uint32_t i = 0; i < n->nports && st == PLUME_OK; i++)
        for (uint32_t j = i + 1; j < n->nports && st == PLUME_OK; j++) {
            if (!fields[i] || fields[i] != fields[j])
                continue;
            const plume_port_desc *a = &n->ports[i], *b = &n->ports[j];
            if (a->direction == PLUME_PORT_IN && b->direction == PLUME_PORT_IN)
                continue;
            const plume_port_desc *w = a->direction != PLUME_PORT_IN ? a : b;
            st = pl_fail(ctx, PLUME_ERR_INVALID_ARGUMENT,
                         "node '%s': ports '%s' and '%s' are both bound to field '%s', which port "
                         "'%s' writes: a node's ports must be different fields when one of them "
                         "is written (bind the output to another field)",
                         n->name, a->id, b->id, eng_field_info(fields[i])->name, w->id);
        }
    if (st == PLUME_OK && n->type->validate)
        st = n->type->validate(n, (eng_field *const *)fields);
    return st;
}

void pl_node_owns_program(pl_node *n, eng_program *p)
{
    char origin[300];
    snprintf(origin, sizeof origin, "node '%s' (%s)", n->name, n->type->desc.id);
    /* a failure (out of memory) leaves the program unnamed: its errors name the syncing node */
    (void)eng_program_set_origin(n->ctx->eng, p, origin);
}

/* A failure says which node, also where the message came from below the node (a field the
 * engine could not write, a file the VDB reader refused); compile errors lead with their
 * file:line:col instead. */
static void name_the_node(pl_node *n, plume_status st)
{
    pl_context *ctx = n->ctx;
    char named[300]; /* "node 'x'": a field or kernel of the node's name does not name it */
    snprintf(named, sizeof named, "node '%s'", n->name);
    if (st == PLUME_OK || st == PLUME_ERR_CANCELLED || st == PLUME_ERR_COMPILE || strstr(ctx->err, named))
        return;
    /* A kernel's runtime error surfaces at the next sync, which may be another node's: the
     * engine starts it with the kernel's node (eng_program_set_origin), which is the one to fix. */
    if (ctx->err_names_node)
        return;
    char prefix[400];
    int k = snprintf(prefix, sizeof prefix, "node '%s' (%s): ", n->name, n->type->desc.id);
    size_t pl = k < 0 ? 0 : (size_t)k < sizeof prefix ? (size_t)k : sizeof prefix - 1;
    size_t el = strnlen(ctx->err, sizeof ctx->err - 1);
    int cut = pl + el >= sizeof ctx->err;
    if (cut) /* the message's end goes, not the node's name */
        el = sizeof ctx->err - 1 - pl;
    memmove(ctx->err + pl, ctx->err, el);
    memcpy(ctx->err, prefix, pl);
    ctx->err[pl + el] = 0;
    static const char mark[] = "\n[... message cut]";
    if (cut)
        memcpy(ctx->err + sizeof ctx->err - sizeof mark, mark, sizeof mark);
}

/* Runs the checks, and then `info`'s cook unless info is NULL, with the failure's message
 * naming the node and logged once, with the name. */
static plume_status checks_and_cook(pl_node *n, const plume_cook_info *info)
{
    pl_context *ctx = n->ctx;
    eng_field **fields = calloc(n->nports ? n->nports : 1, sizeof *fields);
    if (!fields)
        return pl_fail(ctx, PLUME_ERR_INTERNAL, "out of host memory");
    ctx->hold_error_log = 1;
    ctx->error_log_held = 0;
    plume_status st = node_checks(n, fields, info == NULL);
    if (st == PLUME_OK && info) {
        pl_cook_env env = {ctx, info, fields};
        st = n->type->cook(n, &env);
    }
    ctx->hold_error_log = 0;
    name_the_node(n, st);
    if (st != PLUME_OK && ctx->error_log_held)
        pl_log_error(ctx, st);
    free(fields);
    return st;
}

plume_status pl_node_validate(plume_node *handle)
{
    GET_NODE(n, handle);
    return checks_and_cook(n, NULL);
}

plume_status pl_node_cook(pl_node *n, const plume_cook_info *info)
{
    return checks_and_cook(n, info);
}

const plume_ext_validate pl_ext_validate = {sizeof pl_ext_validate, pl_node_validate};
