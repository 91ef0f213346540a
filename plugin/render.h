/* A quick look at a scalar field without a DCC: a single-scattering ray-march to a PNG.
 * Used by the "plume.render/1" extension. Runs on the caller's thread. */
#ifndef PLUME_PLUGIN_RENDER_H
#define PLUME_PLUGIN_RENDER_H

#include "engine/engine.h"

#include <stddef.h>

/* Renders field f seen along -z (x to the right, y up), in its index space, lit from above,
 * into an RGB PNG written atomically at png_path. level_set: f holds signed distances
 * (negative inside), drawn as a solid. An empty field gives the background alone. width/height
 * 0 pick a size from the field's bounds (at most 1024; 512 square for an empty field).
 * Returns 0, or -1 with a message in err. */
int pl_render_field(eng_field *f, int level_set, unsigned width, unsigned height, const char *png_path,
                    char *err, size_t errlen);

#endif
