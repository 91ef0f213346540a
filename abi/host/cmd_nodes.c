/* plume nodes [--json]: node types with their parameters and ports. */
#include "cli.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *param_type_name(plume_param_type t)
{
    static const char *names[] = {"bool", "int", "float", "vec3", "enum", "string", "file", "code"};
    return t >= 0 && t <= PLUME_PARAM_CODE ? names[t] : "unknown";
}

static const char *value_type_name(plume_value_type t) { return t == PLUME_VALUE_VEC3 ? "vec3" : "f32"; }
static const char *dir_name(plume_port_dir d)
{
    return d == PLUME_PORT_IN ? "in" : d == PLUME_PORT_OUT ? "out" : "inout";
}

static json_t *param_json(const plume_param_desc *p)
{
    json_t *o = json_pack("{s:s, s:s, s:s, s:s}", "id", p->id, "label", p->label, "type",
                          param_type_name(p->type), "help", p->help ? p->help : "");
    switch (p->type) {
    case PLUME_PARAM_BOOL: json_object_set_new(o, "default", json_boolean(p->default_number != 0)); break;
    case PLUME_PARAM_INT: json_object_set_new(o, "default", json_integer((json_int_t)p->default_number)); break;
    case PLUME_PARAM_FLOAT: json_object_set_new(o, "default", json_real(p->default_number)); break;
    case PLUME_PARAM_VEC3:
        json_object_set_new(o, "default", json_pack("[f,f,f]", p->default_vec3[0], p->default_vec3[1],
                                                    p->default_vec3[2]));
        break;
    default: json_object_set_new(o, "default", json_string(p->default_string ? p->default_string : ""));
    }
    if (p->flags & PLUME_PARAM_FLAG_HAS_HARD_RANGE)
        json_object_set_new(o, "hard_range", json_pack("[f,f]", p->hard_min, p->hard_max));
    if (p->flags & PLUME_PARAM_FLAG_HAS_UI_RANGE)
        json_object_set_new(o, "ui_range", json_pack("[f,f]", p->ui_min, p->ui_max));
    if (p->type == PLUME_PARAM_ENUM) {
        json_t *items = json_array();
        for (uint32_t k = 0; k < p->enum_count; k++)
            json_array_append_new(items, json_string(p->enum_items[k]));
        json_object_set_new(o, "choices", items);
    }
    json_t *flags = json_array();
    if (p->flags & PLUME_PARAM_FLAG_ANIMATABLE)
        json_array_append_new(flags, json_string("animatable"));
    if (p->flags & PLUME_PARAM_FLAG_HIDDEN)
        json_array_append_new(flags, json_string("hidden"));
    if (p->flags & PLUME_PARAM_FLAG_FILE_OUTPUT)
        json_array_append_new(flags, json_string("file_output"));
    json_object_set_new(o, "flags", flags);
    return o;
}

static void print_default(const plume_param_desc *p)
{
    switch (p->type) {
    case PLUME_PARAM_BOOL: printf("%s", p->default_number ? "true" : "false"); break;
    case PLUME_PARAM_INT: printf("%lld", (long long)p->default_number); break;
    case PLUME_PARAM_FLOAT: printf("%g", p->default_number); break;
    case PLUME_PARAM_VEC3: printf("(%g, %g, %g)", p->default_vec3[0], p->default_vec3[1], p->default_vec3[2]); break;
    case PLUME_PARAM_CODE: printf("<%zu bytes of code>", strlen(p->default_string)); break;
    default: printf("\"%s\"", p->default_string);
    }
}

int cmd_nodes(int argc, char **argv, const cli_common *c)
{
    int as_json = 0;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) {
            as_json = 1;
        } else if (!strcmp(argv[i], "--help")) {
            printf("usage: plume nodes [--json]\n");
            return 0;
        } else {
            cli_error("nodes", "unknown option '%s'", argv[i]);
            return EXIT_USAGE;
        }
    }
    host_plugin p;
    if (cli_load("nodes", c, &p))
        return EXIT_WORK;
    uint32_t n = p.api->node_type_count();
    json_t *all = json_array();
    for (uint32_t i = 0; i < n; i++) {
        const plume_node_desc *d = p.api->node_type(i);
        if (as_json) {
            json_t *params = json_array(), *ports = json_array();
            for (uint32_t k = 0; k < d->param_count; k++)
                json_array_append_new(params, param_json(&d->params[k]));
            for (uint32_t k = 0; k < d->port_count; k++) {
                const plume_port_desc *pt = &d->ports[k];
                json_array_append_new(ports, json_pack("{s:s, s:s, s:s, s:s, s:s, s:b}", "id", pt->id,
                                                       "label", pt->label, "type", value_type_name(pt->value_type),
                                                       "direction", dir_name(pt->direction), "default_field",
                                                       pt->default_field, "optional", pt->optional != 0));
            }
            json_array_append_new(all, json_pack("{s:s, s:s, s:s, s:s, s:i, s:o, s:o}", "id", d->id, "label",
                                                 d->label, "category", d->category, "help", d->help, "version",
                                                 (int)d->version, "params", params, "ports", ports));
            continue;
        }
        printf("%s  (%s, %s, v%u)\n  %s\n", d->id, d->label, d->category, d->version, d->help);
        for (uint32_t k = 0; k < d->port_count; k++) {
            const plume_port_desc *pt = &d->ports[k];
            printf("  port  %-14s %-5s %-4s default field \"%s\"%s\n", pt->id, dir_name(pt->direction),
                   value_type_name(pt->value_type), pt->default_field, pt->optional ? " (optional)" : "");
        }
        for (uint32_t k = 0; k < d->param_count; k++) {
            const plume_param_desc *pp = &d->params[k];
            printf("  param %-14s %-6s default ", pp->id, param_type_name(pp->type));
            print_default(pp);
            if (pp->flags & PLUME_PARAM_FLAG_HAS_HARD_RANGE)
                printf(", range [%g, %g]", pp->hard_min, pp->hard_max);
            if (pp->type == PLUME_PARAM_ENUM) {
                printf(", one of");
                for (uint32_t e = 0; e < pp->enum_count; e++)
                    printf(" %s", pp->enum_items[e]);
            }
            printf("\n        %s\n", pp->help);
        }
        printf("\n");
    }
    if (as_json) {
        char *s = json_dumps(all, JSON_INDENT(2));
        puts(s);
        free(s);
    }
    json_decref(all);
    host_plugin_unload(&p);
    return 0;
}
