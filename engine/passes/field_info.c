/* Field descriptors from a parsed layout: the IR needs the chain of SNodes above a field's leaf
 * (kinds, sizes, runtime ids) to lower accesses and to name the states a task touches. */
#include "engine/passes/passes.h"

#include <stdio.h>
#include <string.h>

int ir_field_info_from_layout(const plm_layout *layout, int field, ir_field_info *out,
                              char *err, size_t n)
{
    if (!layout || !out) {
        snprintf(err, n, "ir_field_info_from_layout: no layout or output");
        return -1;
    }
    const plm_rt_config *cfg = &layout->cfg;
    if (field < 0 || field >= cfg->num_fields) {
        snprintf(err, n, "ir_field_info_from_layout: field %d of %d", field, cfg->num_fields);
        return -1;
    }
    /* Walk up from the leaf: the path is collected leaf-first, then stored root-first. */
    int32_t path[IR_MAX_LEVELS];
    int depth = 0;
    for (int32_t s = cfg->fields[field].snode; s >= 0; s = cfg->snodes[s].parent) {
        if (depth == IR_MAX_LEVELS || s >= cfg->num_snodes) {
            snprintf(err, n, "field '%s': SNode chain deeper than %d levels or broken",
                     layout->field_names[field], IR_MAX_LEVELS);
            return -1;
        }
        path[depth++] = s;
        if (s == 0)
            break;
    }
    if (depth < 2 || path[depth - 1] != 0) {
        snprintf(err, n, "field '%s': its leaf does not hang below the root",
                 layout->field_names[field]);
        return -1;
    }
    ir_field_info fi;
    memset(&fi, 0, sizeof fi);
    snprintf(fi.name, sizeof fi.name, "%s", layout->field_names[field]);
    fi.elem = IR_F32;
    fi.components = (uint8_t)cfg->fields[field].components;
    fi.nlevels = (uint8_t)depth;
    int dim = 0;
    for (int l = 0; l < depth; l++) {
        const plm_rt_snode *sn = &cfg->snodes[path[depth - 1 - l]];
        ir_level *lv = &fi.levels[l];
        int bad = l == 0 ? sn->kind != PLM_RT_ROOT
                         : (sn->kind < PLM_RT_DENSE || sn->kind > PLM_RT_DYNAMIC);
        if (bad) {
            snprintf(err, n, "field '%s': level %d has SNode kind %d", fi.name, l, sn->kind);
            return -1;
        }
        lv->kind = (uint8_t)sn->kind; /* PLM_RT_* and IR_KIND_* share their values */
        lv->rt_snode = sn->id;
        for (int a = 0; a < IR_MAX_DIM; a++) {
            lv->log2_size[a] = (uint8_t)sn->axis_bits[a];
            if (sn->axis_bits[a] && a + 1 > dim)
                dim = a + 1;
        }
    }
    fi.dim = (uint8_t)dim;
    if (fi.components < 1 || fi.components > 4) {
        snprintf(err, n, "field '%s': %u components", fi.name, fi.components);
        return -1;
    }
    ir_field_info_set_geometry(&fi, cfg, field);
    *out = fi;
    return 0;
}

void ir_field_info_set_geometry(ir_field_info *out, const plm_rt_config *cfg, int field)
{
    for (int l = 0; l < out->nlevels; l++) {
        ir_level *lv = &out->levels[l];
        if (lv->rt_snode < 0 || lv->rt_snode >= cfg->num_snodes)
            return;
        const plm_rt_snode *sn = &cfg->snodes[lv->rt_snode];
        ir_geom *g = &lv->geom;
        memset(g, 0, sizeof *g);
        for (int a = 0; a < IR_MAX_DIM; a++) {
            g->axis_shift[a] = (uint8_t)sn->axis_shift[a];
            g->index_shift[a] = (uint8_t)sn->index_shift[a];
            g->extent_bits[a] = (uint8_t)sn->extent_bits[a];
            g->coord_offset[a] = sn->coord_offset[a];
        }
        g->num_cells = sn->num_cells;
        g->header_bytes = sn->header_bytes;
        g->cell_bytes = sn->cell_bytes;
        g->offset_in_parent = sn->offset_in_parent;
        g->known = 1;
    }
    if (field >= 0 && field < cfg->num_fields) {
        out->place_offset = cfg->fields[field].offset;
        out->place_stride = cfg->fields[field].stride;
        out->place_known = 1;
    }
}
