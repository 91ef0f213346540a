/* plume.h — the Plume plugin ABI, version 1.
 *
 * This is the only header a host needs. It is C99 and includes nothing but <stdint.h> and
 * <stddef.h>. A host loads libplume.so with dlopen, looks up the one exported symbol
 * `plume_plugin_entry`, and calls everything else through the function table it returns.
 *
 * Rules every declaration below follows:
 *
 *  Versioning  The ABI is major.minor. A plugin serves one major; minors only add. Every struct
 *              that crosses the boundary starts with `struct_size` (the size the writer knew) and
 *              grows only by appending fields, so a reader checks struct_size before touching a
 *              newer field (PLUME_HAS_FIELD below). New function tables arrive as extensions
 *              looked up by a versioned string id (e.g. "plume.vdb/1").
 *  Status      Every call that can fail returns a plume_status. After a failure the message is
 *              available from last_error() on that context (or last_error(NULL) for calls
 *              without a context). The plugin never aborts, exits or throws into the host; a NULL,
 *              a stale (destroyed) handle or a handle of the wrong kind gives
 *              PLUME_ERR_INVALID_HANDLE, never a crash.
 *  Ownership   The creator frees. Strings and arrays handed in are copied before the call
 *              returns. Descriptors are owned by the plugin and valid until deinit(). Anything the
 *              plugin allocates for the host has its own free function (free_string).
 *  Threading   Stated per function. In short: discovery may be called from any thread at any
 *              time between init() and deinit(); a context and everything created from it
 *              (nodes, volumes) is used by one thread at a time, while different contexts may
 *              cook at the same time on different threads. Host callbacks are only ever called on
 *              the thread that is currently inside a plume call on that context. A callback may
 *              call discovery, last_error, and context_info and get_stats of its context, and
 *              anything on other contexts; any other call on its own context (or that context's
 *              nodes and volumes), and deinit, is refused with PLUME_ERR_INVALID_ARGUMENT and
 *              changes nothing: the context is in the middle of a call. Contexts are made
 *              between init() and the last deinit() only.
 */
#ifndef PLUME_PLUME_H
#define PLUME_PLUME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PLUME_ABI_MAJOR 1
#define PLUME_ABI_MINOR 8

/* True when a struct written with size s->struct_size contains `field`. */
#define PLUME_HAS_FIELD(s, type, field)                                                          \
    ((s)->struct_size >= offsetof(type, field) + sizeof(((type *)0)->field))

/* ---------------------------------------------------------------------------------------------
 * Status codes. Fixed width so the ABI does not depend on the compiler's enum size.
 * ------------------------------------------------------------------------------------------- */
typedef int32_t plume_status;
enum {
    PLUME_OK = 0,
    PLUME_ERR_INVALID_ARGUMENT = 1, /* a NULL pointer, bad value, struct_size too small */
    PLUME_ERR_INVALID_HANDLE = 2,   /* NULL, destroyed, or of another kind */
    PLUME_ERR_NOT_FOUND = 3,        /* unknown node type, parameter, port or field */
    PLUME_ERR_TYPE_MISMATCH = 4,    /* a parameter set with the wrong type, a field of the wrong type */
    PLUME_ERR_OUT_OF_RANGE = 5,     /* a value outside the parameter's hard range */
    PLUME_ERR_MISSING_INPUT = 6,    /* a cook with an unbound port or an undeclared field */
    PLUME_ERR_COMPILE = 7,          /* kernel code with errors (the message has file:line:col) */
    PLUME_ERR_IO = 8,               /* a file could not be read or written */
    PLUME_ERR_MEMORY_BUDGET = 9,    /* the context's memory budget was exceeded */
    PLUME_ERR_CANCELLED = 10,       /* the host's cancel callback asked to stop */
    PLUME_ERR_UNSUPPORTED = 11,     /* e.g. a CUDA device asked for where none exists */
    PLUME_ERR_VERSION = 12,         /* an ABI version or struct the plugin cannot serve */
    PLUME_ERR_INTERNAL = 13         /* a bug in the plugin; the message says where */
};

/* ---------------------------------------------------------------------------------------------
 * Host callbacks, given at context creation. All three are optional (NULL).
 * ------------------------------------------------------------------------------------------- */
typedef int32_t plume_log_level;
enum { PLUME_LOG_DEBUG = 0, PLUME_LOG_INFO = 1, PLUME_LOG_WARNING = 2, PLUME_LOG_ERROR = 3 };

typedef struct plume_host {
    uint32_t struct_size; /* sizeof(plume_host) as the host compiled it */
    void *user;           /* passed back to every callback; the plugin never dereferences it */
    /* A message for the host's log. `message` is valid during the call only. */
    void (*log)(void *user, plume_log_level level, const char *message);
    /* Progress of the current long call: fraction in [0,1] and a short stage text such as
     * "frame 3/24: project". Called at most a few times per second per stage. */
    void (*progress)(void *user, double fraction, const char *stage);
    /* Polled during long calls; returning non-zero makes the call stop at the next safe point
     * and return PLUME_ERR_CANCELLED, leaving no half-written file behind. */
    int32_t (*is_cancelled)(void *user);
} plume_host;

/* ---------------------------------------------------------------------------------------------
 * Node-type discovery
 * ------------------------------------------------------------------------------------------- */
typedef int32_t plume_param_type;
enum {
    PLUME_PARAM_BOOL = 0,
    PLUME_PARAM_INT = 1,
    PLUME_PARAM_FLOAT = 2,
    PLUME_PARAM_VEC3 = 3,
    PLUME_PARAM_ENUM = 4,      /* one of enum_items; set by its string */
    PLUME_PARAM_STRING = 5,
    PLUME_PARAM_FILE_PATH = 6, /* a path; may contain a #### frame pattern where the node says so */
    PLUME_PARAM_CODE = 7       /* kernel-language source text */
};

/* Parameter flags (a bitmask). */
enum {
    PLUME_PARAM_FLAG_ANIMATABLE = 1u << 0, /* the host may change it between frames */
    PLUME_PARAM_FLAG_HIDDEN = 1u << 1,     /* not shown in a UI by default */
    PLUME_PARAM_FLAG_HAS_HARD_RANGE = 1u << 2,
    PLUME_PARAM_FLAG_HAS_UI_RANGE = 1u << 3,
    PLUME_PARAM_FLAG_FILE_OUTPUT = 1u << 4 /* a FILE_PATH the node writes (else it reads it) */
};

typedef struct plume_param_desc {
    uint32_t struct_size;
    const char *id;    /* stable identifier, [a-z0-9_]+ */
    const char *label; /* for a UI */
    const char *help;  /* one or two sentences */
    plume_param_type type;
    uint32_t flags;
    /* Default. BOOL and INT use default_number (0/1 for BOOL); VEC3 uses default_vec3;
     * ENUM, STRING, FILE_PATH, CODE use default_string (never NULL). */
    double default_number;
    double default_vec3[3];
    const char *default_string;
    /* Ranges apply to INT, FLOAT and each VEC3 component; valid per the flags. Values outside
     * the hard range are refused with PLUME_ERR_OUT_OF_RANGE; the UI range is a slider hint. */
    double hard_min, hard_max;
    double ui_min, ui_max;
    /* ENUM only. */
    uint32_t enum_count;
    const char *const *enum_items;
} plume_param_desc;

typedef int32_t plume_value_type;
enum {
    PLUME_VALUE_F32 = 0, /* a scalar field, 1 float per voxel */
    PLUME_VALUE_VEC3 = 1 /* a vector field, 3 floats per voxel */
};

typedef int32_t plume_port_dir;
enum { PLUME_PORT_IN = 0, PLUME_PORT_OUT = 1, PLUME_PORT_INOUT = 2 };

/* A port is a field slot of a node. Ports are bound to the context's fields by name
 * (node_bind); `default_field` is used when the host binds nothing. */
typedef struct plume_port_desc {
    uint32_t struct_size;
    const char *id;
    const char *label;
    const char *help;
    plume_value_type value_type;
    plume_port_dir direction;
    const char *default_field; /* may be "" meaning: must be bound */
    uint32_t optional;         /* non-zero: an unbound port is skipped, not an error */
} plume_port_desc;

typedef struct plume_node_desc {
    uint32_t struct_size;
    const char *id;       /* stable reverse-DNS id, e.g. "org.plume.source.sphere" */
    const char *label;
    const char *category; /* e.g. "Smoke", "IO", "Kernel" */
    const char *help;
    uint32_t version;     /* bumped when the node's behaviour changes */
    uint32_t param_count;
    const plume_param_desc *params;
    uint32_t port_count; /* static ports; a node may add ports per instance (node_port_count) */
    const plume_port_desc *ports;
} plume_node_desc;

/* ---------------------------------------------------------------------------------------------
 * Opaque handles. Never dereferenced by the host. A destroyed handle is detected, not trusted.
 * ------------------------------------------------------------------------------------------- */
typedef struct plume_context plume_context;
typedef struct plume_node plume_node;
typedef struct plume_volume plume_volume;

/* ---------------------------------------------------------------------------------------------
 * Contexts
 * ------------------------------------------------------------------------------------------- */
typedef int32_t plume_device;
enum { PLUME_DEVICE_CPU = 0, PLUME_DEVICE_CUDA = 1, PLUME_DEVICE_AUTO = 2 };

typedef int32_t plume_exec_mode;
enum {
    PLUME_MODE_OPTIMIZED = 0, /* tasks are queued and optimized across nodes at each flush */
    PLUME_MODE_EAGER = 1      /* each task runs as it is launched: the reference */
};

/* Optimizer passes, for disabled_passes (a bitmask). */
enum {
    PLUME_PASS_LISTGEN = 1u << 0, /* list-generation removal */
    PLUME_PASS_DEMOTE = 1u << 1,  /* activation demotion */
    PLUME_PASS_FUSION = 1u << 2,  /* task fusion */
    PLUME_PASS_DSE = 1u << 3      /* dead-store elimination */
};

typedef struct plume_context_options {
    uint32_t struct_size;
    plume_device device;
    uint32_t threads;             /* 0: one per core */
    uint64_t memory_budget_bytes; /* for all the context's fields together; 0: the plugin's
                                   * default (half the machine's memory) */
    plume_exec_mode mode;
    uint32_t disabled_passes;     /* PLUME_PASS_* bits */
    uint32_t flush_every;         /* flush the queue every N tasks; 0: the plugin's default */
} plume_context_options;

typedef struct plume_context_info {
    uint32_t struct_size;
    plume_device device;      /* the device actually used (never AUTO) */
    const char *device_name;  /* e.g. "CPU (2 threads)"; valid until the context is destroyed */
    const char *device_note;  /* why AUTO chose what it chose, or ""; same lifetime */
    uint32_t threads;
    uint64_t memory_budget_bytes;
} plume_context_info;

/* Values of one field, declared before nodes use it. */
typedef struct plume_field_desc {
    uint32_t struct_size;
    const char *name;        /* e.g. "density" */
    plume_value_type value_type;
    const char *layout;      /* SNode layout text; NULL or "" for the default volume layout */
    double voxel_size;       /* world units per voxel; > 0 */
    double origin[3];        /* world position of voxel (0,0,0)'s corner */
    double background[3];    /* value of inactive voxels; [0] only for F32 */
} plume_field_desc;

typedef struct plume_stats {
    uint32_t struct_size;
    uint64_t tasks_launched;
    uint64_t tasks_launched_serial, tasks_launched_range_for, tasks_launched_struct_for;
    uint64_t listgens;
    uint64_t tasks_compiled;
    uint64_t instructions;
    uint64_t fused_tasks;
    uint64_t eliminated_stores;
    uint64_t eliminated_tasks;
    double wall_s;      /* time inside cook calls */
    double backend_s;   /* time running tasks */
    double optimizer_s; /* time in the state-flow-graph passes */
    double compile_s;   /* time compiling tasks */
    uint64_t active_voxels; /* over the fields the host sees (not the nodes' scratch fields):
                               voxels the runtime holds active (every voxel of an allocated
                               8^3 block for dense blocks), not the count an exported file has */
    uint64_t memory_bytes;  /* bytes the sparse trees have taken from the memory budget: their
                               pools grow in chunks of at least budget/4096 bytes, so this
                               grows with the budget too (about 9% of an 8 GB one for the
                               default scene); pages never written are not resident, so the
                               process's resident size can be far smaller */
    /* ABI 1.3: on a GPU (zero on the CPU) */
    double gpu_kernel_s;     /* GPU time of the launched batches, from CUDA events */
    uint64_t gpu_kernels;    /* kernel launches, nodes of CUDA graphs included */
    uint64_t gpu_graph_launches; /* batches launched as one CUDA graph */
    uint64_t gpu_graphs_built;   /* of those, graphs instantiated (the rest came from the cache) */
    /* ABI 1.4 */
    uint64_t tasks_from_disk;    /* of tasks_compiled, loaded from the kernel cache on disk */
    /* ABI 1.6 */
    uint64_t flushes;            /* batches of tasks the optimizer handed on */
    uint64_t flushes_memoized;   /* of those, optimized by repeating an earlier flush's result */
} plume_stats;

/* Time of one cook call. cook refuses (INVALID_ARGUMENT) a dt that is not finite or is
 * negative, a time that is not finite, substeps 0 and substep > substeps (substep == substeps
 * is the frame's own stage, after its substeps). A NULL info means frame 0, time 0, dt 1/24, one
 * substep. */
typedef struct plume_cook_info {
    uint32_t struct_size;
    int64_t frame;
    double time;        /* seconds at the start of this cook */
    double dt;          /* seconds this cook advances (a substep's length) */
    uint32_t substep;   /* index of this substep within the frame */
    uint32_t substeps;  /* substeps in this frame */
} plume_cook_info;

/* Statistics the host may ask of a field; they are a sync point. */
typedef int32_t plume_field_stat;
enum {
    PLUME_STAT_MAX_ABS = 0,     /* max |v| (vector length for VEC3) over active voxels; NaN if one is */
    PLUME_STAT_SUM = 1,         /* sum over active voxels (first component for VEC3) */
    PLUME_STAT_ACTIVE_VOXELS = 2,
    PLUME_STAT_ACTIVE_BLOCKS = 3
};

typedef struct plume_volume_info {
    uint32_t struct_size;
    plume_value_type value_type;
    uint32_t components;     /* 1 or 3 */
    double voxel_size;
    double origin[3];
    double background[3];
    uint64_t block_count;    /* active 8x8x8 blocks in this volume's snapshot */
    uint64_t active_voxels;
    int32_t bbox_min[3], bbox_max[3]; /* inclusive voxel bounds; min > max when empty */
} plume_volume_info;

/* Layout of block data crossing the ABI: 512 voxels, voxel (x,y,z) relative to the block
 * origin at index n = x*64 + y*8 + z (OpenVDB's leaf order); VEC3 blocks are interleaved like
 * OpenVDB's Vec3s arrays: voxel n's components at [3n], [3n+1], [3n+2] (1536 floats). Masks are
 * 8 uint64_t words, bit (n & 63) of word (n >> 6) for voxel n. Block origins are multiples of 8. */
#define PLUME_BLOCK_DIM 8
#define PLUME_BLOCK_VOXELS 512

/* ---------------------------------------------------------------------------------------------
 * The plugin's function table
 * ------------------------------------------------------------------------------------------- */
typedef struct plume_plugin {
    uint32_t struct_size;
    uint32_t abi_major, abi_minor; /* what the plugin implements */
    const char *id;                /* "org.plume" */
    const char *name;              /* "Plume" */
    const char *version;           /* "0.1.0" */
    const char *vendor;

    /* Global set-up and tear-down, reference counted: every successful init needs one deinit.
     * Threading: not concurrently with any other plume call. Descriptors and extensions are
     * valid from init until the matching last deinit. The last deinit destroys any context the
     * host left alive (with its nodes and volumes, waiting for its checkpoint writer), so no
     * plugin thread outlives a dlclose; handles from before it stay invalid after a new init. */
    plume_status (*init)(void);
    void (*deinit)(void);

    /* Message of the last failed call on `ctx`, or of the last failed context-less call on this
     * thread when ctx is NULL. Never NULL; "" when there was none. Valid until the next call on
     * that context (or thread). Threading: the context's thread. */
    const char *(*last_error)(const plume_context *ctx);

    /* Discovery. Threading: any thread. Returned pointers are plugin-owned. */
    uint32_t (*node_type_count)(void);
    const plume_node_desc *(*node_type)(uint32_t index);        /* NULL when out of range */
    const plume_node_desc *(*find_node_type)(const char *id);   /* NULL when unknown */
    /* An extension's function table, or NULL when unknown. The id carries its version. */
    const void *(*get_extension)(const char *id);

    /* Contexts. `options` and `host` may be NULL for defaults; both are copied. On failure *out
     * is NULL and last_error(NULL) says why. Threading: any thread. */
    plume_status (*context_create)(const plume_context_options *options, const plume_host *host,
                                   plume_context **out);
    /* Frees the context and every node and volume created from it. A NULL is ignored. */
    void (*context_destroy)(plume_context *ctx);
    plume_status (*context_info)(plume_context *ctx, plume_context_info *out);

    /* Fields. Declaring a name twice is an error. Threading: the context's thread. */
    plume_status (*field_declare)(plume_context *ctx, const plume_field_desc *desc);
    /* A statistic of a field; a sync point (queued work runs first). */
    plume_status (*field_stat)(plume_context *ctx, const char *field, plume_field_stat stat,
                               double *out);

    /* Nodes. `type_id` from discovery; `name` names the node in messages and keys its own
     * fields ("<name>:pressure"; copied; NULL: the type id; at most 200 bytes, no ':'; longer
     * is PLUME_ERR_INVALID_ARGUMENT). A name a live node of the context
     * has gets "#2", "#3", ...; a node made under a destroyed one's name starts with that
     * node's fields cleared, unless a checkpoint was loaded since (docs/nodes.md, "Scratch
     * fields"). Threading: the context's thread. */
    plume_status (*node_create)(plume_context *ctx, const char *type_id, const char *name,
                                plume_node **out);
    void (*node_destroy)(plume_node *node); /* a NULL or stale handle is ignored */
    /* Typed setters; the type must match the parameter's (ENUM, STRING, FILE_PATH and CODE use
     * set_string; BOOL uses set_bool). Range checks against the hard range. A kernel node's
     * scalar parameters (set by name, from its code) also take set_int for a float and 0 or 1
     * for a bool; a value past the scalar's type is OUT_OF_RANGE (docs/scene-format.md). */
    plume_status (*node_set_bool)(plume_node *node, const char *param, int32_t value);
    plume_status (*node_set_int)(plume_node *node, const char *param, int64_t value);
    plume_status (*node_set_float)(plume_node *node, const char *param, double value);
    plume_status (*node_set_vec3)(plume_node *node, const char *param, const double value[3]);
    plume_status (*node_set_string)(plume_node *node, const char *param, const char *value);
    /* Bind a port to a field of the context by name; "" leaves an optional port out (its
     * default field is not used), and is refused for a port that is not optional. */
    plume_status (*node_bind)(plume_node *node, const char *port, const char *field);
    /* Ports of this instance: the static ones, plus any a node adds from its parameters (the
     * generic kernel node adds one per field parameter of its code). The descriptor is valid
     * until the node is destroyed or its parameters change. */
    plume_status (*node_port_count)(plume_node *node, uint32_t *out);
    plume_status (*node_port)(plume_node *node, uint32_t index, const plume_port_desc **out);

    /* Cook nodes in order. Each node enqueues its work; the queue is flushed when the host needs
     * data (field_stat, volumes, sync) or as the options say. Long cooks report progress and
     * poll cancel. Threading: the context's thread. */
    plume_status (*cook)(plume_context *ctx, plume_node *const *nodes, uint32_t count,
                         const plume_cook_info *info);
    /* Run everything queued; errors raised by queued work (e.g. the memory budget) surface here. */
    plume_status (*sync)(plume_context *ctx);
    plume_status (*get_stats)(plume_context *ctx, plume_stats *out);

    /* Volumes: a view of one field for moving blocks without files. Opening is a sync point
     * and takes a snapshot of the active block list; writes through the volume refresh it.
     * Threading: the context's thread. */
    plume_status (*volume_open)(plume_context *ctx, const char *field, plume_volume **out);
    void (*volume_close)(plume_volume *vol); /* a NULL or stale handle is ignored */
    plume_status (*volume_info)(plume_volume *vol, plume_volume_info *out);
    /* Origins of blocks [first, first+count) of the snapshot, 3 int32 each, into `origins`. */
    plume_status (*volume_block_origins)(plume_volume *vol, uint64_t first, uint32_t count,
                                         int32_t *origins);
    /* Copy one block out: `values` holds components*512 floats; `mask` (8 words) may be NULL.
     * An inactive block reads as background with an empty mask. */
    plume_status (*volume_read_block)(plume_volume *vol, const int32_t origin[3], float *values,
                                      uint64_t *mask);
    /* Fill one block from host memory, activating it. `mask` NULL means all 512 voxels active.
     * The origin must be a multiple of 8. Voxels outside the mask take the background. Whether
     * activity is kept per voxel depends on the field's layout: with the default layout
     * (dense 8^3 blocks, a simulation's) the whole block is active and reads back with a full
     * mask; a bitmasked layout keeps the mask. */
    plume_status (*volume_write_block)(plume_volume *vol, const int32_t origin[3],
                                       const float *values, const uint64_t *mask);
    /* Deactivate every block of the field. */
    plume_status (*volume_clear)(plume_volume *vol);

    /* Frees a string the plugin allocated for the host (extensions return such strings). */
    void (*free_string)(char *s);
} plume_plugin;

/* The one exported symbol. Returns NULL when the plugin cannot serve `host_abi_major`; a host
 * built for an older minor of the same major is served. Threading: any thread. */
typedef const plume_plugin *(*plume_plugin_entry_fn)(uint32_t host_abi_major,
                                                     uint32_t host_abi_minor);
#define PLUME_PLUGIN_ENTRY_SYMBOL "plume_plugin_entry"

#if defined(PLUME_BUILDING_PLUGIN)
__attribute__((visibility("default"))) const plume_plugin *
plume_plugin_entry(uint32_t host_abi_major, uint32_t host_abi_minor);
#endif

/* ---------------------------------------------------------------------------------------------
 * Extensions (get_extension). Each table starts with struct_size and grows by appending.
 * ------------------------------------------------------------------------------------------- */

/* "plume.vdb/1": VDB files without a scene. Threading: the context's thread. */
#define PLUME_EXT_VDB "plume.vdb/1"
typedef int32_t plume_vdb_compression;
enum { PLUME_VDB_COMPRESS_NONE = 0, PLUME_VDB_COMPRESS_ZIP = 1, PLUME_VDB_COMPRESS_BLOSC = 2 };
typedef struct plume_ext_vdb {
    uint32_t struct_size;
    /* A JSON description of the file's grids; free *json with free_string. */
    plume_status (*info_json)(plume_context *ctx, const char *path, char **json);
    /* Write every supported (float, vec3s) grid of `in` to `out` (atomically) as it is, tiles,
     * inactive values, transform and metadata included, with the codec and value width asked
     * for; the others are left out with a warning. */
    plume_status (*convert)(plume_context *ctx, const char *in, const char *out, int32_t half_float,
                            plume_vdb_compression compression);
} plume_ext_vdb;

/* "plume.compile/1": the kernel author's compiler driver. */
#define PLUME_EXT_COMPILE "plume.compile/1"
typedef int32_t plume_emit;
enum {
    PLUME_EMIT_IR = 0,   /* the IR after each pass */
    PLUME_EMIT_LLVM = 1, /* optimized LLVM IR of each task */
    PLUME_EMIT_ASM = 2,  /* host assembly of each task */
    PLUME_EMIT_PTX = 3,  /* PTX of each task */
    PLUME_EMIT_AST = 4,  /* ABI 1.1: the checked program as S-expressions (docs/language.md) */
    PLUME_EMIT_CHECK = 5 /* ABI 1.1: check only; *text lists the kernels and their parameters */
};
typedef struct plume_ext_compile {
    uint32_t struct_size;
    /* Compile `source` (named `file` in messages); kernel NULL means every kernel. The listing
     * asked for goes to *text (free with free_string); errors go to last_error(ctx) with
     * file:line:col. */
    plume_status (*compile)(plume_context *ctx, const char *file, const char *source,
                            const char *kernel, plume_device target, plume_emit emit, char **text);
} plume_ext_compile;

/* "plume.render/1": a picture of a volume without a DCC. */
#define PLUME_EXT_RENDER "plume.render/1"
typedef struct plume_ext_render {
    uint32_t struct_size;
    /* Render grid `grid` (NULL: the first float grid) of a .vdb file to a PNG, atomically.
     * width and height both 0: about 512 pixels on the volume's longer side (at most 1024);
     * one of them 0 alone is INVALID_ARGUMENT. */
    plume_status (*render_vdb)(plume_context *ctx, const char *vdb_path, const char *grid,
                               const char *png_path, uint32_t width, uint32_t height);
} plume_ext_render;

/* "plume.deterministic/1" (ABI 1.2): deterministic mode. With it on, the same scene and
 * parameters give the same field values, and so the same output bytes, run after run and
 * whatever the thread count: float atomic updates (+=, -=, *=, /=) into elements that several
 * loop iterations share run on one thread in loop order, and list generation is ordered; the
 * rest (element-wise work, min/max atomics, whose results do not depend on order) stays
 * parallel. Exported .vdb files carry no run-dependent bytes in any mode (their OpenVDB UUID
 * is derived from their content). A table of its own rather than a field of
 * plume_context_options, so that hosts that fill that struct positionally keep compiling with
 * -Wextra. Threading: the context's thread. */
#define PLUME_EXT_DETERMINISTIC "plume.deterministic/1"
typedef struct plume_ext_deterministic {
    uint32_t struct_size;
    /* on != 0 switches it on, 0 off (the default). Applies to work that runs from then on:
     * set it before the first cook. */
    plume_status (*set)(plume_context *ctx, int32_t on);
    plume_status (*get)(plume_context *ctx, int32_t *on);
} plume_ext_deterministic;

/* "plume.checkpoint/1" (ABI 1.2): the simulation state between frames, so that a bake can
 * resume after its last complete frame. A checkpoint holds every field of the context (the
 * scene's and the ones nodes made for themselves, e.g. "project:pressure", the pressure kept as
 * the next solve's first guess), each block with every value at full float precision, the
 * fields' layouts, transforms and backgrounds, the frame and a key chosen by the host (e.g. a
 * hash of the scene and of the options that change results). It is a .vdb file (one grid per
 * field, named like the field), so other tools can read it. Nodes keep no other state between
 * frames that changes results: what they cache (compiled kernels, field lookups) is rebuilt on
 * the next cook. Threading: the context's thread; each call is a sync point (queued work runs
 * first). Strings handed in are copied. */
#define PLUME_EXT_CHECKPOINT "plume.checkpoint/1"
typedef struct plume_ext_checkpoint {
    uint32_t struct_size;
    /* Writes the checkpoint of frame `frame` (the last frame complete) to `path` atomically: a
     * temporary file in the same folder, flushed to disk and renamed over `path` when complete,
     * so an interruption or a failure leaves the previous checkpoint untouched. `key` may be
     * NULL (stored as ""). Does not poll cancel (it is short and leaves nothing half-done). */
    plume_status (*save)(plume_context *ctx, const char *path, int64_t frame, const char *key);
    /* Reads only the frame and key of a checkpoint; *key (NULL to skip) is freed with
     * free_string. PLUME_ERR_IO names what is wrong with a missing, damaged or truncated file or
     * with a .vdb that is not a Plume checkpoint. Fields are untouched. */
    plume_status (*info)(plume_context *ctx, const char *path, int64_t *frame, char **key);
    /* Replaces every field of ctx with the checkpoint's contents and gives its frame in *frame.
     * Fields the context lacks are declared (as the nodes that own them would; the nodes find
     * them by name); a field whose type, layout, voxel size or origin differs from the
     * checkpoint's, or a field of the context the checkpoint lacks, is an error
     * (PLUME_ERR_INVALID_ARGUMENT) and so is a key other than `key` (NULL: not checked). The
     * whole file is read and checked before any field changes: on an error the fields are as
     * they were, except when the memory budget runs out part way (PLUME_ERR_MEMORY_BUDGET).
     * With deferred writes (plume.deferred_writes/1), a successful load also waits for the
     * pending files, logs a failure among them at ERROR level rather than returning it from
     * the next cook (its frame is one the load discards), and lets checkpoints be written
     * again: the checkpoint is taken to be complete, as one this context saved is. */
    plume_status (*load)(plume_context *ctx, const char *path, const char *key, int64_t *frame);
    /* ABI 1.5 (check struct_size): save in two halves, so that a bake cooks on while the file
     * is written. save_begin takes the same arguments and captures the state (a copy of every
     * field, at this sync point) and returns; a thread of the plugin then writes the file as
     * save does (atomically). At most one write is pending per context: save_finish waits for
     * it and returns how it went (PLUME_OK: the file is in place, or nothing was pending;
     * otherwise the error, and `path` still holds its previous checkpoint). save_begin, save,
     * info, load and context_destroy wait for a pending write first and log its failure (ERROR
     * level) instead. The capture costs a copy of the fields in host memory until written. */
    plume_status (*save_begin)(plume_context *ctx, const char *path, int64_t frame, const char *key);
    plume_status (*save_finish)(plume_context *ctx);
} plume_ext_checkpoint;

/* "plume.deferred_writes/1" (ABI 1.7): files written while the next frame cooks. Off by
 * default: a host that expects a frame's files in place when cook returns does nothing. With it
 * on, a node that writes a file (org.plume.vdb.export) captures what it writes (a copy of its
 * grids, at the frame's sync point) and a thread of the plugin writes the file, atomically as
 * before, in the order the nodes queued them. At most two writes are pending per context (a
 * third waits in cook), so a slow disk holds the cook back rather than filling memory. A
 * write's failure is returned once, by the context's next cook, sync or finish (PLUME_ERR_IO,
 * naming the node, frame and file); the writes queued after a failed one are dropped, not
 * written, and that message counts them. A checkpoint (plume.checkpoint/1 save and save_begin)
 * is written only when no file queued before it failed or was dropped: otherwise it fails
 * (PLUME_ERR_IO) and the previous checkpoint stays, so a resumed bake restarts at the frame
 * whose file is missing; so do all later ones of the context until a checkpoint is loaded
 * (which rewinds the bake to a complete frame). "wrote FILE" log lines come at the context's next cook, sync or
 * finish. Threading: the context's thread. */
#define PLUME_EXT_DEFERRED_WRITES "plume.deferred_writes/1"
typedef struct plume_ext_deferred_writes {
    uint32_t struct_size;
    /* on != 0 switches deferral on; 0 switches it off after waiting for every pending write
     * (as finish, whose status it returns). */
    plume_status (*set)(plume_context *ctx, int32_t on);
    plume_status (*get)(plume_context *ctx, int32_t *on);
    /* Waits for every pending write: PLUME_OK when every file queued so far is in place (or
     * was reported failed already), else the first failure not yet reported. context_destroy
     * waits too and logs a failure at ERROR level. */
    plume_status (*finish)(plume_context *ctx);
} plume_ext_deferred_writes;

/* "plume.validate/1" (ABI 1.8): a node's checks without cooking it, for a node editor that
 * marks a node as soon as it is wired wrong (and a scene reader that reports the place before
 * anything is simulated). validate returns PLUME_OK when a cook now would pass the checks made
 * before any work: every port that must be bound is bound to a declared field of the port's
 * kind, no field written through one port is bound to another, and the node's own settings are
 * complete (a kernel node: its code compiles and holds its kernel, and each bound field has the
 * dimensions of its parameter). Otherwise the status and message (last_error, naming the node)
 * that the cook would give. Changes nothing and queues nothing; a later cook may still fail on
 * what only running shows (a file that cannot be read, the memory budget). Threading: the
 * context's thread. */
#define PLUME_EXT_VALIDATE "plume.validate/1"
typedef struct plume_ext_validate {
    uint32_t struct_size;
    plume_status (*validate)(plume_node *node);
} plume_ext_validate;

#ifdef __cplusplus
}
#endif
#endif /* PLUME_PLUME_H */
