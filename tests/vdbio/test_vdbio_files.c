/* Every real VDB file in the shared data folder, and the fixtures vdb_reference.py writes for
 * what that folder lacks (level set, active tiles, half floats, a bool grid), read through vdbio
 * and compared with pyopenvdb's figures; plus the facts the data README states.
 *
 * usage: test_vdbio_files PYTHON SCRIPT DATA_DIR */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vdbio_test_util.h"

static const plm_vdb_grid *grid_or_fail(const plm_vdb_file *f, const char *name, int nth)
{
    const plm_vdb_grid *g = NULL;
    plm_vdb_error err;
    plm_vdb_status s = plm_vdb_find_grid(f, name, nth, &g, &err);
    CHECK(s == PLM_VDB_OK, "%s", err.message);
    return g;
}

static plm_vdb_grid_info info_of(const plm_vdb_grid *g)
{
    plm_vdb_grid_info in;
    memset(&in, 0, sizeof in);
    if (g)
        CHECK(plm_vdb_grid_get_info(g, &in, NULL) == PLM_VDB_OK, "info");
    return in;
}

/* Facts from ../shared/data/vdb/README.md, independent of both readers. */
static void check_readme_facts(const char *path, const plm_vdb_file *f)
{
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    if (!strcmp(base, "oiio_sphere_fog.vdb")) {
        CHECK(plm_vdb_grid_count(f) == 1, "one grid");
        plm_vdb_grid_info in = info_of(grid_or_fail(f, "density", 0));
        CHECK(in.type == PLM_VDB_TYPE_FLOAT && in.grid_class == PLM_VDB_CLASS_FOG_VOLUME,
              "density float fog");
        CHECK(in.file_leaf_count == 56, "56 leaves, got %llu",
              (unsigned long long)in.file_leaf_count);
    } else if (!strcmp(base, "oiio_sphereCd_vec3.vdb")) {
        plm_vdb_grid_info in = info_of(grid_or_fail(f, "Cd", 0));
        CHECK(in.type == PLM_VDB_TYPE_VEC3 && in.components == 3, "Cd is vec3s");
        CHECK(in.grid_class == PLM_VDB_CLASS_UNKNOWN, "class unknown");
        CHECK(in.background[0] == 1.0f && in.background[1] == 1.0f && in.background[2] == 1.0f,
              "background (1,1,1)");
        CHECK(in.file_leaf_count == 56, "56 leaves");
    } else if (!strcmp(base, "arnold_grids_blosc.vdb")) {
        CHECK(plm_vdb_grid_count(f) == 3, "three grids");
        const uint64_t leaves[3] = {8, 28, 8};
        for (int i = 0; i < 3; i++) {
            plm_vdb_grid_info in = info_of(plm_vdb_file_grid(f, i));
            CHECK(!strcmp(in.name, "density") && in.name_index == i && in.index == i,
                  "grid %d is density number %d", i, i);
            CHECK(in.grid_class == PLM_VDB_CLASS_FOG_VOLUME, "fog");
            CHECK(in.file_leaf_count == leaves[i], "grid %d: %llu leaves, README says %llu", i,
                  (unsigned long long)in.file_leaf_count, (unsigned long long)leaves[i]);
            CHECK(grid_or_fail(f, "density", i) == plm_vdb_file_grid(f, i), "find by index");
        }
        const plm_vdb_grid *g = NULL;
        plm_vdb_error err;
        CHECK(plm_vdb_find_grid(f, "density", 3, &g, &err) == PLM_VDB_ERR_NO_GRID && !g,
              "a fourth density does not exist");
    } else if (!strcmp(base, "arnold_torus_bifrost.vdb")) {
        plm_vdb_grid_info in = info_of(grid_or_fail(f, "voxel_fog_density", 0));
        CHECK(in.grid_class == PLM_VDB_CLASS_FOG_VOLUME && in.type == PLM_VDB_TYPE_FLOAT, "fog");
        CHECK(in.file_leaf_count == 20, "20 leaves");
    }
}

/* Facts about the fixtures that follow from how vdb_reference.py builds them. */
static void check_fixture_facts(const char *path, const plm_vdb_file *f)
{
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    plm_vdb_error err;
    if (!strcmp(base, "fixture_levelset.vdb")) {
        const plm_vdb_grid *g = grid_or_fail(f, "surface", 0);
        plm_vdb_grid_info in = info_of(g);
        CHECK(in.grid_class == PLM_VDB_CLASS_LEVEL_SET, "level set class");
        CHECK(in.background[0] == 0.75f, "background = half width 3 x voxel 0.25, got %g",
              (double)in.background[0]);
        CHECK(in.voxel_size[0] == 0.25, "voxel size");
        /* inside voxels are inactive and hold -background */
        float v[512];
        uint64_t m[8];
        int32_t o[3];
        int inside = 0;
        for (uint64_t i = 0; i < in.leaf_count; i++) {
            plm_vdb_read_leaf(g, i, o, v, m, NULL);
            for (int n = 0; n < 512; n++)
                inside += !((m[n >> 6] >> (n & 63)) & 1) && v[n] == -0.75f;
        }
        CHECK(inside > 0, "no inactive inside voxel (-background) found");
    } else if (!strcmp(base, "fixture_tiles.vdb")) {
        plm_vdb_grid_info in = info_of(grid_or_fail(f, "tiles", 0));
        CHECK(in.active_tile_count == 2, "two active tiles, got %llu",
              (unsigned long long)in.active_tile_count);
        CHECK(in.active_voxel_count == 128u * 128 * 128 + 512 + 20, "active voxels %llu",
              (unsigned long long)in.active_voxel_count);
        CHECK(in.leaf_count == in.file_leaf_count + 4096 + 1, "tiles voxelize into 4097 leaves");
        CHECK(in.background[0] == 0.5f, "background");
        plm_vdb_grid_info iv = info_of(grid_or_fail(f, "vtiles", 0));
        CHECK(iv.active_voxel_count == 513 && iv.leaf_count == 2, "vec3 tile + one voxel");
    } else if (!strcmp(base, "fixture_half.vdb")) {
        plm_vdb_grid_info in = info_of(grid_or_fail(f, "density", 0));
        CHECK(in.saved_as_half && in.type == PLM_VDB_TYPE_FLOAT, "half float grid reads as f32");
        CHECK(in.active_voxel_count == 200, "200 voxels");
        plm_vdb_grid_info iv = info_of(grid_or_fail(f, "vel", 0));
        CHECK(iv.saved_as_half && iv.type == PLM_VDB_TYPE_VEC3, "half vec3");
    } else if (!strcmp(base, "fixture_mixed.vdb")) {
        const plm_vdb_grid *b = grid_or_fail(f, "mask", 0);
        plm_vdb_grid_info in = info_of(b);
        CHECK(in.type == PLM_VDB_TYPE_UNSUPPORTED && !strcmp(in.type_name, "bool"),
              "bool grid reported unsupported by name (%s)", in.type_name);
        CHECK(in.active_voxel_count == 30, "its figures are still listed");
        int32_t o[3];
        CHECK(plm_vdb_read_leaf(b, 0, o, NULL, NULL, &err) == PLM_VDB_ERR_UNSUPPORTED &&
                  strstr(err.message, "bool"),
              "reading a bool grid: %s", err.message);
        const plm_vdb_grid *d = grid_or_fail(f, "density", 0);
        float v[512];
        uint64_t m[8];
        CHECK(plm_vdb_read_leaf(d, 0, o, v, m, &err) == PLM_VDB_OK, "%s", err.message);
        const int n = (1 << 6) | (2 << 3) | 3; /* voxel (1,2,3): n = 83, word 1, bit 19 */
        CHECK(o[0] == 0 && o[1] == 0 && o[2] == 0 && v[n] == 4.0f, "voxel (1,2,3) = 4 at n = 83");
        CHECK(m[0] == 0 && m[1] == (1ull << 19) && m[2] == 0, "only word 1 bit 19 active");
    }
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s PYTHON SCRIPT DATA_DIR\n", argv[0]);
        return 2;
    }
    const char *python = argv[1], *script = argv[2], *data = argv[3];
    char *tmp = tu_make_temp_dir("vdbio-files");
    if (!tmp) {
        fprintf(stderr, "cannot make a temporary folder\n");
        return 1;
    }
    char *cmd = NULL, *out = NULL;
    if (asprintf(&cmd, "'%s' '%s' fixtures '%s'", python, script, tmp) < 0)
        return 1;
    int rc = tu_run(cmd, &out);
    free(cmd);
    if (rc == SKIP_CODE || rc < 0) {
        printf("SKIP: pyopenvdb is not available to %s, no reference figures: %s\n", python,
               out ? out : "");
        free(out);
        tu_remove_dir(tmp);
        free(tmp);
        return SKIP_CODE;
    }
    CHECK(rc == 0, "fixtures: %s", out ? out : "");
    free(out);

    char **shared = NULL, **fixtures = NULL;
    int nshared = tu_list_vdb(data, &shared), nfix = tu_list_vdb(tmp, &fixtures);
    if (nshared == 0)
        printf("note: no VDB files in %s (shared data absent); checking the fixtures only\n",
               data);
    CHECK(nfix == 4, "4 fixtures written, found %d", nfix);
    for (int pass = 0; pass < 2; pass++) {
        char **list = pass ? fixtures : shared;
        int n = pass ? nfix : nshared;
        for (int i = 0; i < n; i++) {
            char *json = NULL;
            if (asprintf(&json, "%s/ref-%d-%d.json", tmp, pass, i) < 0)
                return 1;
            int r = tu_reference_dump(python, script, list[i], json);
            CHECK(r == 0, "reference dump of %s", list[i]);
            plm_vdb_file *f = NULL;
            plm_vdb_error err;
            plm_vdb_status s = plm_vdb_open(list[i], &f, &err);
            CHECK(s == PLM_VDB_OK, "open %s: %s", list[i], err.message);
            if (s == PLM_VDB_OK && r == 0) {
                int before = tu_failures;
                tu_compare_reference(f, json, 0.0);
                if (pass)
                    check_fixture_facts(list[i], f);
                else
                    check_readme_facts(list[i], f);
                printf("%s: %d grids, %s\n", list[i], plm_vdb_grid_count(f),
                       tu_failures == before ? "matches pyopenvdb" : "MISMATCH");
            }
            plm_vdb_close(f);
            free(json);
        }
    }
    tu_free_list(shared, nshared);
    tu_free_list(fixtures, nfix);
    tu_remove_dir(tmp);
    free(tmp);
    if (tu_failures) {
        fprintf(stderr, "%d check(s) failed\n", tu_failures);
        return 1;
    }
    printf("ok\n");
    return 0;
}
