/* SNode tree layouts: the text form, its parser, and the geometry handed to the runtime.
 *
 * Grammar (whitespace allowed between tokens):
 *
 *   layout := chain (';' chain)*                    each chain is one child of the root
 *   chain  := ['offset' '(' int (',' int)* ')' '.'] node ('.' node)* '.' place
 *   node   := kind '(' [axes ','] size (',' size)* ')'
 *   kind   := 'dense' | 'pointer' | 'bitmasked' | 'dynamic'
 *   axes   := 1 to 3 distinct letters of 'ijk' (i = x, j = y, k = z); default 'ijk'.
 *             The first axis varies slowest in the cell index: dense(ijk,8) stores cell
 *             (x, y, z) at x*64 + y*8 + z, OpenVDB's leaf order.
 *   size   := a power of two; one size for every axis of the node, or one per axis
 *   place  := ('place' | 'place_aos') '(' field (',' field)* ')'
 *   field  := name [':' ('f32' | 'vec3')]           default f32; vec3 = 3 f32 components
 *
 * - offset gives the index of the chain's first voxel per axis (one value = all axes), so a chain
 *   can cover negative coordinates: offset(-2048).pointer(32).pointer(16).dense(8) covers
 *   [-2048, 2048) along each axis.
 * - place stores the fields of a block struct-of-arrays (each field one contiguous array per leaf
 *   container: with dense(ijk,8) a f32 field is 512 floats in VDB order, so a VDB leaf is copied
 *   with one memcpy); place_aos stores one struct of all fields per cell. For pointer and dynamic
 *   leaves, whose cells are allocated one by one, both are the same.
 * - dynamic has exactly one axis and must be the last node of its chain.
 * - Limits: 64 SNodes, 64 fields, 15 levels per chain, at most 30 index bits per axis, at most
 *   2^24 cells per node; field names are unique, [A-Za-z_][A-Za-z0-9_]*, at most 63 characters.
 *
 * PLM_LAYOUT_DEFAULT is the default volume layout (DESIGN.md): OpenVDB's 5-4-3 tree below its
 * root, one 8^3 dense leaf block per VDB leaf; append ".place(name)" for the fields.
 *
 * Threading: parsing is pure; a parsed layout is immutable and may be shared by threads. */
#ifndef PLUME_SPARSE_LAYOUT_H
#define PLUME_SPARSE_LAYOUT_H

#include <stddef.h>

#include "sparse/runtime/runtime.h"

#define PLM_LAYOUT_DEFAULT "offset(-2048).pointer(ijk,32).pointer(ijk,16).dense(ijk,8)"
#define PLM_LAYOUT_NAME_MAX 64

typedef struct plm_layout {
    plm_rt_config cfg;                                        /* geometry for plm_rt_init */
    char field_names[PLM_RT_MAX_FIELDS][PLM_LAYOUT_NAME_MAX];
    int num_chains;
} plm_layout;

/* Parses text into *out (caller frees with plm_layout_free). On error returns -1, *out is NULL
 * and err receives "column N: what is wrong" (1-based column into text). */
int plm_layout_parse(const char *text, plm_layout **out, char *err, size_t errlen);
void plm_layout_free(plm_layout *layout);
/* Field id by name, or -1. */
int plm_layout_field(const plm_layout *layout, const char *name);
/* The SNode whose cells are the field's blocks (the parent of its leaf SNode). */
int plm_layout_block_snode(const plm_layout *layout, int field);
const char *plm_layout_kind_name(int kind);

#endif
