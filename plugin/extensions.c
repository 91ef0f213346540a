/* Extension lookup by versioned id. */
#include "plugin/plugin.h"

#include <string.h>

const void *pl_get_extension(const char *id)
{
    (void)id;
    return NULL;
}
