/* A quick look at a scalar field without a DCC: a single-scattering ray-march to a PNG.
 * Used by the "plume.render/1" extension. Runs on the caller's thread. */
#ifndef PLUME_PLUGIN_RENDER_H
#define PLUME_PLUGIN_RENDER_H

#include "engine/engine.h"

#include <stddef.h>

/* Renders field f seen along -z (x to the right, y up), lit from above, into an RGB PNG written
 * atomically at png_path. width/height 0 pick a size from the field's bounds (at most 1024).
 * Returns 0, or -1 with a message in err. */
int pl_render_field(eng_field *f, unsigned width, unsigned height, const char *png_path, char *err,
                    size_t errlen);

#endif
