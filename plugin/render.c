/* Single-scattering volume render of a scalar field: density is resampled into a dense grid
 * over the active bounds (coarsened so it stays small), light transmittance from a light above
 * is integrated down each column, and each pixel integrates in-scattered light front to back. */
#define _GNU_SOURCE
#include "plugin/render.h"

#include <math.h>
#include <png.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#define MAX_GRID 256 /* voxels per axis of the resampled grid */

typedef struct grid {
    int n[3];
    int step;     /* field voxels per grid cell */
    float *d;     /* n0*n1*n2 densities, index (z*n1 + y)*n0 + x */
} grid;

static size_t gidx(const grid *g, int x, int y, int z) { return ((size_t)z * g->n[1] + y) * g->n[0] + x; }

/* A level set's value is a distance (negative inside): shown as a solid, density 1 inside
 * and 0 outside with a ramp a voxel wide, so the surface and not the narrow band is seen. */
static float to_density(float v, int level_set, float voxel)
{
    if (!level_set)
        return v;
    float d = 0.5f - v / voxel;
    return d < 0 ? 0 : d > 1 ? 1 : d;
}

static int build_grid(eng_field *f, int level_set, grid *g, char *err, size_t n)
{
    uint64_t nb = eng_field_block_count(f);
    if (nb == 0) { /* an early frame before the source: the background alone */
        g->n[0] = g->n[1] = g->n[2] = 1;
        g->d = calloc(1, sizeof *g->d);
        if (!g->d) {
            snprintf(err, n, "out of memory");
            return -1;
        }
        return 0;
    }
    float voxel = (float)eng_field_info(f)->voxel_size;
    int32_t *o = malloc((size_t)nb * 3 * sizeof *o);
    if (!o) {
        snprintf(err, n, "out of memory");
        return -1;
    }
    nb = eng_field_block_origins(f, o, nb);
    int32_t lo[3] = {INT32_MAX, INT32_MAX, INT32_MAX}, hi[3] = {INT32_MIN, INT32_MIN, INT32_MIN};
    for (uint64_t b = 0; b < nb; b++)
        for (int k = 0; k < 3; k++) {
            if (o[3 * b + k] < lo[k])
                lo[k] = o[3 * b + k];
            if (o[3 * b + k] + 8 > hi[k])
                hi[k] = o[3 * b + k] + 8;
        }
    int ext = 0;
    for (int k = 0; k < 3; k++)
        if (hi[k] - lo[k] > ext)
            ext = hi[k] - lo[k];
    g->step = (ext + MAX_GRID - 1) / MAX_GRID;
    for (int k = 0; k < 3; k++)
        g->n[k] = (hi[k] - lo[k] + g->step - 1) / g->step;
    g->d = calloc((size_t)g->n[0] * g->n[1] * g->n[2], sizeof *g->d);
    float *vals = malloc(3 * 512 * sizeof *vals);
    if (!g->d || !vals) {
        free(o);
        free(vals);
        snprintf(err, n, "out of memory");
        return -1;
    }
    /* Box-filter the field into the coarse grid (mean over the cell's voxels). */
    float w = 1.0f / (float)(g->step * g->step * g->step);
    for (uint64_t b = 0; b < nb; b++) {
        eng_field_read_block(f, o + 3 * b, vals, NULL);
        for (int i = 0; i < 512; i++) {
            int x = (o[3 * b] + (i >> 6) - lo[0]) / g->step;
            int y = (o[3 * b + 1] + ((i >> 3) & 7) - lo[1]) / g->step;
            int z = (o[3 * b + 2] + (i & 7) - lo[2]) / g->step;
            float v = to_density(vals[i], level_set, voxel);
            if (v > 0)
                g->d[gidx(g, x, y, z)] += v * w;
        }
    }
    free(vals);
    free(o);
    return 0;
}

/* libpng's own handlers print to stderr, which is the host's: its message is kept for ours. */
static void png_error_fn(png_structp png, png_const_charp msg)
{
    char *why = png_get_error_ptr(png);
    if (why)
        snprintf(why, 200, "%s", msg);
    png_longjmp(png, 1);
}

static void png_warning_fn(png_structp png, png_const_charp msg)
{
    (void)png, (void)msg;
}

static int write_png_atomic(const char *path, const uint8_t *rgb, unsigned w, unsigned h, char *err,
                            size_t n)
{
    char tmp[4200];
    /* beside the file; a name near the 255-byte limit leaves no room for the suffix, so the
     * temporary's own name is cut (the pid keeps it apart) */
    const char *slash = strrchr(path, '/');
    int dir_len = slash ? (int)(slash - path + 1) : 0;
    snprintf(tmp, sizeof tmp, "%.*s.%.200s.tmp%d", dir_len, path, path + dir_len, (int)getpid());
    FILE *fp = fopen(tmp, "wb");
    if (!fp) {
        snprintf(err, n, "cannot write %s: %m", path);
        return -1;
    }
    char why[200] = "";
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, why, png_error_fn, png_warning_fn);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    errno = 0;
    if (!png || !info || setjmp(png_jmpbuf(png))) {
        /* libpng's writes go through fwrite: a full disk or a file-size limit sets errno */
        int e = errno;
        png_destroy_write_struct(&png, &info);
        fclose(fp);
        unlink(tmp);
        if (e)
            snprintf(err, n, "cannot write %s: %s", path, strerror(e));
        else
            snprintf(err, n, "PNG encoding of %s failed%s%s", path, why[0] ? ": " : "", why);
        return -1;
    }
    png_init_io(png, fp);
    png_set_IHDR(png, info, w, h, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                 PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    for (unsigned y = 0; y < h; y++)
        png_write_row(png, (png_const_bytep)(rgb + (size_t)y * w * 3));
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    if (fclose(fp) != 0 || rename(tmp, path) != 0) {
        unlink(tmp);
        snprintf(err, n, "cannot write %s: %m", path);
        return -1;
    }
    return 0;
}

int pl_render_field(eng_field *f, int level_set, unsigned width, unsigned height, const char *png_path,
                    char *err, size_t errlen)
{
    grid g = {{0, 0, 0}, 1, NULL};
    if (build_grid(f, level_set, &g, err, errlen))
        return -1;
    /* Light transmittance at each cell from a light straight above (+y). */
    const float sigma = 40.0f / (float)(g.n[1] > 1 ? g.n[1] : 1) * 4.0f; /* extinction per cell */
    float *light = malloc((size_t)g.n[0] * g.n[1] * g.n[2] * sizeof *light);
    if (!light) {
        free(g.d);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int z = 0; z < g.n[2]; z++)
        for (int x = 0; x < g.n[0]; x++) {
            float t = 1.0f;
            for (int y = g.n[1] - 1; y >= 0; y--) {
                light[gidx(&g, x, y, z)] = t;
                t *= expf(-sigma * g.d[gidx(&g, x, y, z)]);
            }
        }
    if (!width || !height) {
        int longest = g.n[0] > g.n[1] ? g.n[0] : g.n[1];
        int scale = longest ? (512 + longest - 1) / longest : 1;
        width = (unsigned)(g.n[0] * scale);
        height = (unsigned)(g.n[1] * scale);
        if (width > 1024 || height > 1024) {
            width = width > 1024 ? 1024 : width;
            height = height > 1024 ? 1024 : height;
        }
    }
    uint8_t *rgb = malloc((size_t)width * height * 3);
    if (!rgb) {
        free(light);
        free(g.d);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (unsigned py = 0; py < height; py++)
        for (unsigned px = 0; px < width; px++) {
            int x = (int)((double)px * g.n[0] / width);
            int y = g.n[1] - 1 - (int)((double)py * g.n[1] / height);
            float t = 1.0f, radiance = 0.0f;
            for (int z = g.n[2] - 1; z >= 0 && t > 1e-3f; z--) { /* front (+z) to back */
                float a = 1.0f - expf(-sigma * g.d[gidx(&g, x, y, z)]);
                radiance += t * a * (0.15f + 0.85f * light[gidx(&g, x, y, z)]);
                t *= 1.0f - a;
            }
            /* Smoke over a dark blue-grey gradient background. */
            float bg = 0.12f + 0.10f * (float)py / (float)height;
            float c[3] = {radiance + t * bg, radiance + t * bg * 1.05f, radiance + t * bg * 1.3f};
            for (int k = 0; k < 3; k++) {
                float v = powf(c[k] > 1 ? 1 : c[k], 1.0f / 2.2f);
                rgb[((size_t)py * width + px) * 3 + k] = (uint8_t)(v * 255.0f + 0.5f);
            }
        }
    int rc = write_png_atomic(png_path, rgb, width, height, err, errlen);
    free(rgb);
    free(light);
    free(g.d);
    return rc;
}
