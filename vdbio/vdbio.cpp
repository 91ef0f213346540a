// vdbio: the C API of vdbio.h over OpenVDB 10. The only C++ file of the project; every exception
// stops at the extern "C" functions at the bottom, which turn it into a status and a message.
#include "vdbio/vdbio.h"

// OpenVDB's templates must keep default visibility even though the project builds with
// -fvisibility=hidden: otherwise GCC emits their static members (Tree::sTreeTypeName, ...)
// hidden while the guard variables stay process-wide unique symbols, and the library's own
// openvdb::initialize() then finds a guard set for a variable it never sees and crashes.
// libplume.so's version script still keeps all of them out of its dynamic symbol table.
#pragma GCC visibility push(default)
#include <openvdb/openvdb.h>
#include <openvdb/io/Archive.h>
#include <openvdb/io/GridDescriptor.h>
#include <openvdb/io/io.h>
#include <openvdb/tools/Prune.h>
#include <openvdb/tools/SignedFloodFill.h>
#pragma GCC visibility pop

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <new>
#include <string>
#include <vector>

using openvdb::Coord;
using openvdb::FloatGrid;
using openvdb::GridBase;
using openvdb::Vec3SGrid;

static_assert(sizeof(openvdb::Vec3s) == 3 * sizeof(float), "Vec3s must be three packed floats");
static_assert(FloatGrid::TreeType::LeafNodeType::SIZE == 512, "leaves are 8^3");

// ------------------------------------------------------------------------------------ errors

namespace {

// Thrown inside vdbio for errors we classify ourselves; caught by guarded().
struct Failure {
    plm_vdb_status status;
    std::string message;
};

[[noreturn]] void raise(plm_vdb_status s, const std::string &msg) { throw Failure{s, msg}; }

std::string format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char *fmt, ...)
{
    char buf[PLM_VDB_MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return buf;
}

plm_vdb_status report(plm_vdb_error *err, plm_vdb_status s, const std::string &msg)
{
    if (err) {
        err->status = s;
        snprintf(err->message, sizeof err->message, "%s", msg.c_str());
    }
    return s;
}

plm_vdb_status ok(plm_vdb_error *err) { return report(err, PLM_VDB_OK, ""); }

// Runs f, mapping every exception to a status. io_status is what an I/O failure means here
// (a damaged input when reading, an unwritable destination when writing); where names the
// operation for the message.
template <class F>
plm_vdb_status guarded(plm_vdb_error *err, plm_vdb_status io_status, const std::string &where, F &&f)
{
    try {
        f();
        return ok(err);
    } catch (const Failure &e) {
        return report(err, e.status, e.message);
    } catch (const std::bad_alloc &) {
        return report(err, PLM_VDB_ERR_MEMORY, where + ": out of memory");
    } catch (const std::ios_base::failure &e) {
        return report(err, io_status, where + ": " + e.what());
    } catch (const openvdb::IoError &e) {
        return report(err, io_status, where + ": " + e.what());
    } catch (const openvdb::Exception &e) {
        return report(err, PLM_VDB_ERR_INTERNAL, where + ": OpenVDB: " + e.what());
    } catch (const std::exception &e) {
        return report(err, PLM_VDB_ERR_INTERNAL, where + ": " + e.what());
    } catch (...) {
        return report(err, PLM_VDB_ERR_INTERNAL, where + ": unknown exception");
    }
}

std::once_flag init_once;
void init_openvdb()
{
    std::call_once(init_once, [] { openvdb::initialize(); });
}

} // namespace

// ------------------------------------------------------------------------------------ grids

namespace {

struct MetaText {
    std::string key, type, value;
};

// An active tile voxelized into leaves: leaves [first, first + n^3) of the tile part of a grid.
struct Tile {
    Coord origin;
    int32_t leaves_per_axis;
    uint64_t first;
    float value[3];
};

} // namespace

struct plm_vdb_grid {
    GridBase::Ptr grid;      // null for a grid type OpenVDB does not know
    bool created = false;
    bool dirty = true;       // created grid changed since the cached figures were computed
    int index = -1, name_index = 0;
    std::string name, type_name, map_type;
    std::vector<MetaText> meta;
    plm_vdb_grid_info info{};
    std::vector<const void *> leaves; // leaf nodes in tree order
    std::vector<Tile> tiles;          // sorted by first
    std::vector<Tile> off_tiles;      // inactive tiles off the background, sorted by first
};

struct plm_vdb_file {
    std::string path;
    uint32_t format_version = 0;
    std::vector<MetaText> meta;
    std::vector<plm_vdb_grid *> grids;
    ~plm_vdb_file()
    {
        for (plm_vdb_grid *g : grids)
            delete g;
    }
};

namespace {

std::string number(double v, int digits)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%.*g", digits, v);
    return buf;
}

template <class V> std::string vec_text(const V &v, int digits)
{
    return "[" + number(double(v[0]), digits) + ", " + number(double(v[1]), digits) + ", " +
           number(double(v[2]), digits) + "]";
}

MetaText meta_text(const std::string &key, const openvdb::Metadata &m)
{
    MetaText t{key, m.typeName(), ""};
    if (auto *s = dynamic_cast<const openvdb::StringMetadata *>(&m))
        t.value = s->value();
    else if (auto *b = dynamic_cast<const openvdb::BoolMetadata *>(&m))
        t.value = b->value() ? "true" : "false";
    else if (auto *i = dynamic_cast<const openvdb::Int32Metadata *>(&m))
        t.value = std::to_string(i->value());
    else if (auto *l = dynamic_cast<const openvdb::Int64Metadata *>(&m))
        t.value = std::to_string(l->value());
    else if (auto *f = dynamic_cast<const openvdb::FloatMetadata *>(&m))
        t.value = number(f->value(), 9);
    else if (auto *d = dynamic_cast<const openvdb::DoubleMetadata *>(&m))
        t.value = number(d->value(), 17);
    else if (auto *vi = dynamic_cast<const openvdb::Vec3IMetadata *>(&m))
        t.value = vec_text(vi->value(), 17);
    else if (auto *vs = dynamic_cast<const openvdb::Vec3SMetadata *>(&m))
        t.value = vec_text(vs->value(), 9);
    else if (auto *vd = dynamic_cast<const openvdb::Vec3DMetadata *>(&m))
        t.value = vec_text(vd->value(), 17);
    else
        t.value = m.str();
    return t;
}

std::vector<MetaText> meta_list(const openvdb::MetaMap &map)
{
    std::vector<MetaText> out;
    for (auto it = map.beginMeta(); it != map.endMeta(); ++it)
        if (it->second)
            out.push_back(meta_text(it->first, *it->second));
    return out;
}

// Parses "x y z", "[x, y, z]" or "(x,y,z)" into three doubles.
bool parse_vec3(const char *s, double v[3])
{
    for (int k = 0; k < 3; k++) {
        while (*s == ' ' || *s == '[' || *s == '(' || *s == ',' || *s == '\t')
            s++;
        char *end;
        errno = 0;
        v[k] = strtod(s, &end);
        if (end == s || errno)
            return false;
        s = end;
    }
    while (*s == ' ' || *s == ']' || *s == ')' || *s == '\t')
        s++;
    return *s == '\0';
}

bool parse_int(const char *s, long long lo, long long hi, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end || errno || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

bool parse_double(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno)
        return false;
    *out = v;
    return true;
}

// Builds metadata of a named type from its text form; raises ARGUMENT naming key on bad text.
openvdb::Metadata::Ptr meta_from_text(const char *key, const char *type, const char *value)
{
    std::string t = type, k = key;
    double d, v[3];
    long long i;
    auto bad = [&]() {
        raise(PLM_VDB_ERR_ARGUMENT,
              format("metadata \"%s\": \"%s\" is not a valid %s value", key, value, type));
    };
    if (t == "string")
        return openvdb::StringMetadata(value).copy();
    if (t == "bool") {
        if (!strcmp(value, "true") || !strcmp(value, "1"))
            return openvdb::BoolMetadata(true).copy();
        if (!strcmp(value, "false") || !strcmp(value, "0"))
            return openvdb::BoolMetadata(false).copy();
        bad();
    }
    if (t == "int32") {
        if (!parse_int(value, INT32_MIN, INT32_MAX, &i))
            bad();
        return openvdb::Int32Metadata(int32_t(i)).copy();
    }
    if (t == "int64") {
        if (!parse_int(value, INT64_MIN, INT64_MAX, &i))
            bad();
        return openvdb::Int64Metadata(int64_t(i)).copy();
    }
    if (t == "float" || t == "double") {
        if (!parse_double(value, &d))
            bad();
        if (t == "float")
            return openvdb::FloatMetadata(float(d)).copy();
        return openvdb::DoubleMetadata(d).copy();
    }
    if (t == "vec3i" || t == "vec3s" || t == "vec3d") {
        if (!parse_vec3(value, v))
            bad();
        if (t == "vec3i")
            return openvdb::Vec3IMetadata(openvdb::Vec3i(int(v[0]), int(v[1]), int(v[2]))).copy();
        if (t == "vec3s")
            return openvdb::Vec3SMetadata(
                       openvdb::Vec3s(float(v[0]), float(v[1]), float(v[2])))
                .copy();
        return openvdb::Vec3DMetadata(openvdb::Vec3d(v[0], v[1], v[2])).copy();
    }
    raise(PLM_VDB_ERR_ARGUMENT,
          format("metadata \"%s\": unsupported type \"%s\" (string, bool, int32, int64, float, "
                 "double, vec3i, vec3s, vec3d)",
                 key, type));
}

plm_vdb_class class_of(openvdb::GridClass c)
{
    switch (c) {
    case openvdb::GRID_LEVEL_SET: return PLM_VDB_CLASS_LEVEL_SET;
    case openvdb::GRID_FOG_VOLUME: return PLM_VDB_CLASS_FOG_VOLUME;
    case openvdb::GRID_STAGGERED: return PLM_VDB_CLASS_STAGGERED;
    default: return PLM_VDB_CLASS_UNKNOWN;
    }
}

openvdb::GridClass vdb_class(plm_vdb_class c)
{
    switch (c) {
    case PLM_VDB_CLASS_LEVEL_SET: return openvdb::GRID_LEVEL_SET;
    case PLM_VDB_CLASS_FOG_VOLUME: return openvdb::GRID_FOG_VOLUME;
    case PLM_VDB_CLASS_STAGGERED: return openvdb::GRID_STAGGERED;
    default: return openvdb::GRID_UNKNOWN;
    }
}

void copy3(float dst[3], float v) { dst[0] = v, dst[1] = dst[2] = 0.0f; }
void copy3(float dst[3], const openvdb::Vec3s &v) { dst[0] = v[0], dst[1] = v[1], dst[2] = v[2]; }

// Lists the leaves and the active tiles of a 5-4-3 tree (both value types have that shape),
// walking the nodes rather than the values so the cost follows the node count.
template <class GridT> void index_tree(const GridT &grid, plm_vdb_grid &g)
{
    using TreeT = typename GridT::TreeType;
    using RootT = typename TreeT::RootNodeType;
    using UpperT = typename RootT::ChildNodeType;
    using LowerT = typename UpperT::ChildNodeType;
    static_assert(UpperT::DIM == 4096 && LowerT::DIM == 128, "5-4-3 tree");
    g.leaves.clear();
    g.tiles.clear();
    g.off_tiles.clear();
    uint64_t next = 0, off_next = 0;
    openvdb::CoordBBox stored; // empty
    auto add_tile = [&stored](std::vector<Tile> &list, uint64_t &count, const Coord &origin, int dim,
                              const typename GridT::ValueType &v) {
        stored.expand(openvdb::CoordBBox(origin, origin.offsetBy(dim - 1)));
        Tile t;
        t.origin = origin;
        t.leaves_per_axis = dim / 8;
        t.first = count;
        copy3(t.value, v);
        count += uint64_t(t.leaves_per_axis) * uint64_t(t.leaves_per_axis) *
                 uint64_t(t.leaves_per_axis);
        list.push_back(t);
    };
    // Inactive tiles that hold something other than the background count too, at the root
    // level as below it: a level set's inside can be one 4096^3 tile (a collider read without
    // it was hollow). Its 2^27 leaves are listed, not made; a reader that voxelizes them is
    // stopped by its memory budget with the count in hand.
    const typename GridT::ValueType bg = grid.background();
    const RootT &root = grid.tree().root();
    for (auto it = root.cbeginValueOn(); it; ++it)
        add_tile(g.tiles, next, it.getCoord(), UpperT::DIM, *it);
    for (auto it = root.cbeginValueOff(); it; ++it)
        if (*it != bg)
            add_tile(g.off_tiles, off_next, it.getCoord(), UpperT::DIM, *it);
    for (auto up = root.cbeginChildOn(); up; ++up) {
        for (auto it = up->cbeginValueOn(); it; ++it)
            add_tile(g.tiles, next, it.getCoord(), LowerT::DIM, *it);
        // ValueOff iterators also visit child slots (their value mask is off too): skip those.
        for (auto it = up->cbeginValueOff(); it; ++it)
            if (!up->isChildMaskOn(it.pos()) && *it != bg)
                add_tile(g.off_tiles, off_next, it.getCoord(), LowerT::DIM, *it);
        for (auto lo = up->cbeginChildOn(); lo; ++lo) {
            for (auto it = lo->cbeginValueOn(); it; ++it)
                add_tile(g.tiles, next, it.getCoord(), 8, *it);
            for (auto it = lo->cbeginValueOff(); it; ++it)
                if (!lo->isChildMaskOn(it.pos()) && *it != bg)
                    add_tile(g.off_tiles, off_next, it.getCoord(), 8, *it);
            for (auto leaf = lo->cbeginChildOn(); leaf; ++leaf) {
                g.leaves.push_back(&*leaf);
                stored.expand(openvdb::CoordBBox(leaf->origin(), leaf->origin().offsetBy(7)));
            }
        }
    }
    g.info.stored_empty = stored.empty() ? 1 : 0;
    for (int k = 0; k < 3 && !stored.empty(); k++)
        g.info.stored_min[k] = stored.min()[k], g.info.stored_max[k] = stored.max()[k];
    g.info.inactive_leaf_count = off_next;
    g.info.leaf_count = uint64_t(g.leaves.size()) + next;
    g.info.active_tile_count = g.tiles.size();
    g.info.file_leaf_count = g.leaves.size();
    copy3(g.info.background, grid.background());
}

// Fills g.info (and the leaf index) from g.grid.
void refresh(plm_vdb_grid &g)
{
    plm_vdb_grid_info &in = g.info;
    in = plm_vdb_grid_info{};
    in.index = g.index;
    in.name_index = g.name_index;
    in.bbox_empty = 1;
    in.stored_empty = 1;
    g.leaves.clear();
    g.tiles.clear();
    g.off_tiles.clear();
    if (!g.grid) {
        in.name = g.name.c_str();
        in.type_name = g.type_name.c_str();
        g.map_type = "unknown";
        in.map_type = g.map_type.c_str();
        return;
    }
    const GridBase &gb = *g.grid;
    g.name = gb.getName();
    g.type_name = gb.valueType();
    const openvdb::math::Transform &xf = gb.transform();
    g.map_type = xf.mapType();
    g.meta = meta_list(gb);
    in.name = g.name.c_str();
    in.type_name = g.type_name.c_str();
    in.map_type = g.map_type.c_str();
    in.grid_class = class_of(gb.getGridClass());
    in.saved_as_half = gb.saveFloatAsHalf() ? 1 : 0;
    in.is_linear = xf.isLinear() ? 1 : 0;
    const openvdb::Mat4d m = xf.baseMap()->getAffineMap()->getMat4();
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 4; c++)
            in.index_to_world[r][c] = m(c, r); // OpenVDB multiplies row vectors
    const openvdb::Vec3d vs = xf.voxelSize();
    for (int k = 0; k < 3; k++)
        in.voxel_size[k] = vs[k];
    in.meta_count = int(g.meta.size());
    in.active_voxel_count = gb.activeVoxelCount();
    const openvdb::CoordBBox bb = gb.evalActiveVoxelBoundingBox();
    if (in.active_voxel_count > 0 && !bb.empty()) {
        in.bbox_empty = 0;
        for (int k = 0; k < 3; k++)
            in.bbox_min[k] = bb.min()[k], in.bbox_max[k] = bb.max()[k];
    }
    in.file_leaf_count = gb.baseTree().leafCount();
    in.active_tile_count = gb.baseTree().activeTileCount();
    if (auto fg = openvdb::GridBase::grid<FloatGrid>(g.grid)) {
        in.type = PLM_VDB_TYPE_FLOAT;
        in.components = 1;
        index_tree(*fg, g);
    } else if (auto vg = openvdb::GridBase::grid<Vec3SGrid>(g.grid)) {
        in.type = PLM_VDB_TYPE_VEC3;
        in.components = 3;
        index_tree(*vg, g);
    }
    g.dirty = false;
}

void ensure_fresh(const plm_vdb_grid *g)
{
    if (g->created && g->dirty)
        refresh(*const_cast<plm_vdb_grid *>(g));
}

std::string grid_label(const plm_vdb_grid &g)
{
    if (g.created)
        return format("grid \"%s\"", g.name.c_str());
    return format("grid %d \"%s\"", g.index, g.name.c_str());
}

// Leaf t of the leaves a tile list is voxelized into: its origin and 512 copies of the value.
void tile_leaf(const std::vector<Tile> &tiles, uint64_t t, int ncomp, int32_t origin[3],
               float *values)
{
    auto it = std::upper_bound(tiles.begin(), tiles.end(), t,
                               [](uint64_t v, const Tile &tile) { return v < tile.first; });
    const Tile &tile = *(it - 1);
    const uint64_t local = t - tile.first, n = uint64_t(tile.leaves_per_axis);
    origin[0] = tile.origin.x() + int32_t(8 * (local / (n * n)));
    origin[1] = tile.origin.y() + int32_t(8 * ((local / n) % n));
    origin[2] = tile.origin.z() + int32_t(8 * (local % n));
    if (values)
        for (int v = 0; v < 512; v++)
            for (int k = 0; k < ncomp; k++)
                values[v * ncomp + k] = tile.value[k];
}

template <class GridT>
void read_leaf_t(const plm_vdb_grid &g, uint64_t i, int32_t origin[3], float *values,
                 uint64_t mask[8])
{
    using LeafT = typename GridT::TreeType::LeafNodeType;
    using ValueT = typename GridT::ValueType;
    constexpr int ncomp = sizeof(ValueT) / sizeof(float);
    if (i < g.leaves.size()) {
        const LeafT &leaf = *static_cast<const LeafT *>(g.leaves[size_t(i)]);
        const Coord o = leaf.origin();
        origin[0] = o.x(), origin[1] = o.y(), origin[2] = o.z();
        if (values)
            memcpy(values, leaf.buffer().data(), sizeof(ValueT) * LeafT::SIZE);
        if (mask)
            for (int w = 0; w < 8; w++)
                mask[w] = leaf.getValueMask().template getWord<uint64_t>(openvdb::Index(w));
        return;
    }
    tile_leaf(g.tiles, i - g.leaves.size(), ncomp, origin, values);
    if (mask)
        for (int w = 0; w < 8; w++)
            mask[w] = ~uint64_t(0);
}

} // namespace

// ------------------------------------------------------------------------------------ reading

namespace {

// Reads a whole VDB stream in file order. Does what io::Stream's constructor does, but knows
// which grid it is in when the data runs out, and steps over grids of unregistered types.
class Reader : public openvdb::io::Archive {
public:
    openvdb::io::Archive::Ptr copy() const override
    {
        return openvdb::io::Archive::Ptr(new Reader(*this));
    }

    // size: the file's length in bytes, to refuse a truncated grid before OpenVDB reads it.
    void read(std::istream &is, plm_vdb_file &file, std::string &where, uint64_t size)
    {
        namespace io = openvdb::io;
        where = "in the file header";
        readHeader(is);
        file.format_version = fileVersion();
        io::StreamMetadata::Ptr stream_meta(new io::StreamMetadata);
        io::setStreamMetadataPtr(is, stream_meta, /*transfer=*/false);
        io::setVersion(is, libraryVersion(), fileVersion());
        io::setDataCompression(is, compression());
        openvdb::MetaMap meta;
        meta.readMeta(is);
        file.meta = meta_list(meta);
        const int32_t count = readGridCount(is);
        std::vector<io::GridDescriptor> descs;
        Archive::NamedGridMap named;
        for (int32_t i = 0; i < count; i++) {
            where = format("in the descriptor of grid %d", int(i));
            io::GridDescriptor gd;
            bool known = true;
            try {
                gd.read(is);
            } catch (const openvdb::LookupError &) {
                // GridDescriptor::read throws on an unregistered type after reading the names,
                // just before the three offsets (grid, blocks, end).
                known = false;
            }
            auto *g = new plm_vdb_grid;
            file.grids.push_back(g);
            g->index = int(i);
            g->name = gd.gridName();
            where = format("in grid %d \"%s\"", int(i), g->name.c_str());
            if (!known) {
                g->type_name = gd.gridType();
                int64_t pos[3] = {0, 0, 0};
                is.read(reinterpret_cast<char *>(pos), sizeof pos);
                if (!inputHasGridOffsets() || pos[2] <= 0)
                    raise(PLM_VDB_ERR_UNSUPPORTED,
                          format("%s: grid %d \"%s\" has type %s, which OpenVDB does not know, "
                                 "and the file has no offsets to step over it",
                                 file.path.c_str(), int(i), g->name.c_str(),
                                 gd.gridType().c_str()));
                is.seekg(std::streamoff(pos[2]));
                continue;
            }
            // With offsets, a grid's end is known before its data is read. Checking it here
            // gives the clearer message, and keeps OpenVDB 10 from reading a cut topology:
            // RootNode::readTopology leaks its child node when the child's read throws.
            if (inputHasGridOffsets() && (gd.getEndPos() < 0 || uint64_t(gd.getEndPos()) > size))
                raise(PLM_VDB_ERR_CORRUPT,
                      format("%s: truncated or damaged VDB file: grid %d \"%s\" ends at byte %lld, "
                             "the file has %llu",
                             file.path.c_str(), int(i), g->name.c_str(),
                             (long long)gd.getEndPos(), (unsigned long long)size));
            GridBase::Ptr grid = GridBase::createGrid(gd.gridType());
            grid->setSaveFloatAsHalf(gd.saveFloatAsHalf());
            Archive::readGrid(grid, gd, is);
            g->grid = grid;
            descs.push_back(gd);
            named[gd.uniqueName()] = grid;
        }
        where = "while connecting instanced grids";
        for (const io::GridDescriptor &gd : descs)
            connectInstance(gd, named);
    }
};

void open_file(const char *path, plm_vdb_file &file)
{
    struct stat st;
    if (stat(path, &st) != 0)
        raise(PLM_VDB_ERR_NO_FILE, format("%s: cannot open: %s", path, strerror(errno)));
    if (S_ISDIR(st.st_mode))
        raise(PLM_VDB_ERR_NO_FILE, format("%s: is a folder, not a VDB file", path));
    std::ifstream is(path, std::ios_base::in | std::ios_base::binary);
    if (!is)
        raise(PLM_VDB_ERR_NO_FILE, format("%s: cannot open: %s", path, strerror(errno)));
    // OpenVDB's magic number, an int64 0x56444220 ("VDB ") at offset 0.
    unsigned char head[8] = {0};
    is.read(reinterpret_cast<char *>(head), 8);
    static const unsigned char magic[8] = {0x20, 0x42, 0x44, 0x56, 0, 0, 0, 0};
    if (is.gcount() < 8 || memcmp(head, magic, 8) != 0)
        raise(PLM_VDB_ERR_NOT_VDB,
              format("%s: not a VDB file (%s)", path,
                     is.gcount() < 8 ? "shorter than the 8-byte header"
                                     : "no VDB magic number at offset 0"));
    // The format version follows (uint32 at offset 8). OpenVDB reads a newer one with a
    // warning printed on stdout (where `plume vdb info --json` writes) and then guesses at a
    // layout it does not know: refused here, as vdbio.h says.
    unsigned char ver[4] = {0};
    is.read(reinterpret_cast<char *>(ver), 4);
    uint32_t version = uint32_t(ver[0]) | uint32_t(ver[1]) << 8 | uint32_t(ver[2]) << 16 |
                       uint32_t(ver[3]) << 24;
    if (is.gcount() == 4 && version > openvdb::OPENVDB_FILE_VERSION)
        raise(PLM_VDB_ERR_CORRUPT,
              format("%s: VDB file format %u, newer than this OpenVDB reads (up to %u): written "
                     "by a newer OpenVDB, or damaged",
                     path, unsigned(version), unsigned(openvdb::OPENVDB_FILE_VERSION)));
    is.clear();
    is.seekg(0);
    // Every short read throws, so a truncated file cannot yield a silently partial grid.
    is.exceptions(std::ios_base::failbit | std::ios_base::badbit);
    Reader reader;
    std::string where;
    try {
        reader.read(is, file, where, uint64_t(st.st_size));
    } catch (const Failure &) {
        throw;
    } catch (const std::bad_alloc &) {
        raise(PLM_VDB_ERR_CORRUPT,
              format("%s: damaged VDB file: out of memory %s (file is %llu bytes)", path,
                     where.c_str(), (unsigned long long)st.st_size));
    } catch (const std::ios_base::failure &) {
        raise(PLM_VDB_ERR_CORRUPT,
              format("%s: truncated or damaged VDB file: unexpected end of data %s "
                     "(file is %llu bytes)",
                     path, where.c_str(), (unsigned long long)st.st_size));
    } catch (const std::exception &e) {
        raise(PLM_VDB_ERR_CORRUPT,
              format("%s: damaged or unreadable VDB file %s: %s", path, where.c_str(),
                     e.what()));
    }
    for (plm_vdb_grid *g : file.grids) {
        int same = 0;
        for (plm_vdb_grid *h : file.grids) {
            if (h == g)
                break;
            same += h->name == g->name;
        }
        g->name_index = same;
        std::string name = g->name; // the descriptor's name wins over the "name" metadata
        refresh(*g);
        g->name = name;
        g->info.name = g->name.c_str();
    }
}

} // namespace

extern "C" {

const char *plm_vdb_status_name(plm_vdb_status status)
{
    switch (status) {
    case PLM_VDB_OK: return "ok";
    case PLM_VDB_ERR_ARGUMENT: return "bad argument";
    case PLM_VDB_ERR_NO_FILE: return "cannot open file";
    case PLM_VDB_ERR_NOT_VDB: return "not a VDB file";
    case PLM_VDB_ERR_CORRUPT: return "truncated or damaged file";
    case PLM_VDB_ERR_NO_GRID: return "grid not found";
    case PLM_VDB_ERR_UNSUPPORTED: return "unsupported grid type";
    case PLM_VDB_ERR_WRITE: return "cannot write file";
    case PLM_VDB_ERR_MEMORY: return "out of memory";
    case PLM_VDB_ERR_INTERNAL: return "internal OpenVDB error";
    }
    return "unknown status";
}

const char *plm_vdb_class_name(plm_vdb_class cls)
{
    switch (cls) {
    case PLM_VDB_CLASS_LEVEL_SET: return "level set";
    case PLM_VDB_CLASS_FOG_VOLUME: return "fog volume";
    case PLM_VDB_CLASS_STAGGERED: return "staggered";
    default: return "unknown";
    }
}

plm_vdb_status plm_vdb_open(const char *path, plm_vdb_file **out, plm_vdb_error *err)
{
    if (!out)
        return report(err, PLM_VDB_ERR_ARGUMENT, "plm_vdb_open: out is NULL");
    *out = nullptr;
    if (!path || !*path)
        return report(err, PLM_VDB_ERR_ARGUMENT, "plm_vdb_open: empty path");
    plm_vdb_file *file = nullptr;
    plm_vdb_status s = guarded(err, PLM_VDB_ERR_CORRUPT, std::string(path), [&] {
        init_openvdb();
        file = new plm_vdb_file;
        file->path = path;
        open_file(path, *file);
    });
    if (s != PLM_VDB_OK) {
        delete file;
        return s;
    }
    *out = file;
    return s;
}

void plm_vdb_close(plm_vdb_file *file)
{
    delete file;
}

int plm_vdb_grid_count(const plm_vdb_file *file)
{
    return file ? int(file->grids.size()) : 0;
}

const plm_vdb_grid *plm_vdb_file_grid(const plm_vdb_file *file, int index)
{
    if (!file || index < 0 || size_t(index) >= file->grids.size())
        return nullptr;
    return file->grids[size_t(index)];
}

uint32_t plm_vdb_file_format_version(const plm_vdb_file *file)
{
    return file ? file->format_version : 0;
}

plm_vdb_status plm_vdb_find_grid(const plm_vdb_file *file, const char *name, int name_index,
                                 const plm_vdb_grid **out, plm_vdb_error *err)
{
    if (out)
        *out = nullptr;
    if (!file || !name || !out)
        return report(err, PLM_VDB_ERR_ARGUMENT, "plm_vdb_find_grid: NULL argument");
    int seen = 0;
    for (const plm_vdb_grid *g : file->grids) {
        if (g->name == name) {
            if (seen == name_index) {
                *out = g;
                return ok(err);
            }
            seen++;
        }
    }
    std::string have;
    for (const plm_vdb_grid *g : file->grids)
        have += (have.empty() ? "\"" : ", \"") + g->name + "\"";
    if (seen > 0)
        return report(err, PLM_VDB_ERR_NO_GRID,
                      format("%s: no grid \"%s\" number %d: the file has %d grid(s) of that "
                             "name (numbered from 0)",
                             file->path.c_str(), name, name_index, seen));
    return report(err, PLM_VDB_ERR_NO_GRID,
                  format("%s: no grid named \"%s\"; grids in the file: %s", file->path.c_str(),
                         name, have.empty() ? "none" : have.c_str()));
}

int plm_vdb_file_meta_count(const plm_vdb_file *file)
{
    return file ? int(file->meta.size()) : 0;
}

plm_vdb_status plm_vdb_file_meta(const plm_vdb_file *file, int i, plm_vdb_meta *out,
                                 plm_vdb_error *err)
{
    if (!file || !out || i < 0 || size_t(i) >= file->meta.size())
        return report(err, PLM_VDB_ERR_ARGUMENT, "plm_vdb_file_meta: bad file or index");
    const MetaText &m = file->meta[size_t(i)];
    *out = plm_vdb_meta{m.key.c_str(), m.type.c_str(), m.value.c_str()};
    return ok(err);
}

plm_vdb_status plm_vdb_grid_get_info(const plm_vdb_grid *grid, plm_vdb_grid_info *out,
                                     plm_vdb_error *err)
{
    if (!grid || !out)
        return report(err, PLM_VDB_ERR_ARGUMENT, "plm_vdb_grid_get_info: NULL argument");
    return guarded(err, PLM_VDB_ERR_INTERNAL, "grid info", [&] {
        ensure_fresh(grid);
        *out = grid->info;
    });
}

plm_vdb_status plm_vdb_grid_meta(const plm_vdb_grid *grid, int i, plm_vdb_meta *out,
                                 plm_vdb_error *err)
{
    if (!grid || !out)
        return report(err, PLM_VDB_ERR_ARGUMENT, "plm_vdb_grid_meta: NULL argument");
    return guarded(err, PLM_VDB_ERR_INTERNAL, "grid metadata", [&] {
        ensure_fresh(grid);
        if (i < 0 || size_t(i) >= grid->meta.size())
            raise(PLM_VDB_ERR_ARGUMENT,
                  format("%s: metadata index %d out of range (%zu entries)",
                         grid_label(*grid).c_str(), i, grid->meta.size()));
        const MetaText &m = grid->meta[size_t(i)];
        *out = plm_vdb_meta{m.key.c_str(), m.type.c_str(), m.value.c_str()};
    });
}

plm_vdb_status plm_vdb_read_leaf(const plm_vdb_grid *grid, uint64_t i, int32_t origin[3],
                                 float *values, uint64_t mask[8], plm_vdb_error *err)
{
    if (!grid || !origin)
        return report(err, PLM_VDB_ERR_ARGUMENT, "plm_vdb_read_leaf: NULL argument");
    return guarded(err, PLM_VDB_ERR_INTERNAL, "read leaf", [&] {
        ensure_fresh(grid);
        if (grid->info.type == PLM_VDB_TYPE_UNSUPPORTED)
            raise(PLM_VDB_ERR_UNSUPPORTED,
                  format("%s: value type %s is not supported (float and vec3s are)",
                         grid_label(*grid).c_str(), grid->type_name.c_str()));
        if (i >= grid->info.leaf_count)
            raise(PLM_VDB_ERR_ARGUMENT,
                  format("%s: leaf %" PRIu64 " out of range (%" PRIu64 " leaves)",
                         grid_label(*grid).c_str(), i, grid->info.leaf_count));
        if (grid->info.type == PLM_VDB_TYPE_FLOAT)
            read_leaf_t<FloatGrid>(*grid, i, origin, values, mask);
        else
            read_leaf_t<Vec3SGrid>(*grid, i, origin, values, mask);
    });
}

plm_vdb_status plm_vdb_read_inactive_leaf(const plm_vdb_grid *grid, uint64_t i,
                                          int32_t origin[3], float *values, plm_vdb_error *err)
{
    if (!grid || !origin)
        return report(err, PLM_VDB_ERR_ARGUMENT, "plm_vdb_read_inactive_leaf: NULL argument");
    return guarded(err, PLM_VDB_ERR_INTERNAL, "read inactive leaf", [&] {
        ensure_fresh(grid);
        if (grid->info.type == PLM_VDB_TYPE_UNSUPPORTED)
            raise(PLM_VDB_ERR_UNSUPPORTED,
                  format("%s: value type %s is not supported (float and vec3s are)",
                         grid_label(*grid).c_str(), grid->type_name.c_str()));
        if (i >= grid->info.inactive_leaf_count)
            raise(PLM_VDB_ERR_ARGUMENT,
                  format("%s: inactive leaf %" PRIu64 " out of range (%" PRIu64 ")",
                         grid_label(*grid).c_str(), i, grid->info.inactive_leaf_count));
        tile_leaf(grid->off_tiles, i, grid->info.type == PLM_VDB_TYPE_FLOAT ? 1 : 3, origin,
                  values);
    });
}

} // extern "C"

// ------------------------------------------------------------------------------------ writing

namespace {

openvdb::math::Transform::Ptr make_transform(const plm_vdb_grid_desc &d)
{
    bool zero = true;
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 4; c++)
            zero = zero && d.index_to_world[r][c] == 0.0;
    if (zero) {
        double vs = d.voxel_size == 0.0 ? 1.0 : d.voxel_size;
        if (!(vs > 0.0) || !std::isfinite(vs))
            raise(PLM_VDB_ERR_ARGUMENT,
                  format("grid \"%s\": voxel size %g must be positive", d.name, vs));
        return openvdb::math::Transform::createLinearTransform(vs);
    }
    openvdb::Mat4d m;
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 4; c++) {
            if (!std::isfinite(d.index_to_world[r][c]))
                raise(PLM_VDB_ERR_ARGUMENT,
                      format("grid \"%s\": transform entry [%d][%d] is not finite", d.name, r,
                             c));
            m(c, r) = d.index_to_world[r][c];
        }
    const double *last = d.index_to_world[3];
    if (last[0] != 0.0 || last[1] != 0.0 || last[2] != 0.0 || last[3] != 1.0)
        raise(PLM_VDB_ERR_ARGUMENT,
              format("grid \"%s\": transform is not affine (last row must be 0 0 0 1)", d.name));
    const double det = m.getMat3().det();
    if (!(std::fabs(det) > 1e-300))
        raise(PLM_VDB_ERR_ARGUMENT,
              format("grid \"%s\": transform is singular (determinant %g)", d.name, det));
    return openvdb::math::Transform::createLinearTransform(m);
}

template <class GridT>
void add_leaf_t(plm_vdb_grid &g, const int32_t origin[3], const float *values,
                const uint64_t mask[8])
{
    using LeafT = typename GridT::TreeType::LeafNodeType;
    using ValueT = typename GridT::ValueType;
    GridT &grid = static_cast<GridT &>(*g.grid);
    const Coord o(origin[0], origin[1], origin[2]);
    if (grid.tree().probeConstLeaf(o))
        raise(PLM_VDB_ERR_ARGUMENT,
              format("grid \"%s\": a leaf at (%d, %d, %d) was already added", g.name.c_str(),
                     origin[0], origin[1], origin[2]));
    auto *leaf = new LeafT(o, grid.background(), false);
    memcpy(static_cast<void *>(leaf->buffer().data()), values, sizeof(ValueT) * LeafT::SIZE);
    auto &vm = leaf->getValueMask();
    for (int w = 0; w < 8; w++)
        vm.template getWord<uint64_t>(openvdb::Index(w)) = mask ? mask[w] : ~uint64_t(0);
    grid.tree().addLeaf(leaf); // takes ownership
}

bool reserved_key(const char *key)
{
    return !strcmp(key, "name") || !strcmp(key, "class") ||
           !strcmp(key, "is_saved_as_half_float") || !strncmp(key, "file_", 5);
}

// Writes a VDB with grid offsets (what io::File writes) into any seekable stream we own, so
// write errors surface as exceptions instead of being dropped.
class Writer : public openvdb::io::Archive {
public:
    openvdb::io::Archive::Ptr copy() const override
    {
        return openvdb::io::Archive::Ptr(new Writer(*this));
    }
    void write_to(std::ostream &os, const openvdb::GridCPtrVec &grids,
                  const openvdb::MetaMap &meta) const
    {
        Archive::write(os, grids, /*seekable=*/true, meta);
    }
};

std::atomic<unsigned> temp_counter{0};

// Creates a new empty file next to path; returns its name and an open descriptor.
std::string make_temp(const std::string &path, int *fd_out)
{
    const size_t slash = path.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash + 1);
    std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
    // A name near the file system's limit (255 bytes) would leave no room for the suffix: the
    // temporary's is cut, which the pid and counter keep unique.
    if (base.size() > 200)
        base.resize(200);
    for (int attempt = 0; attempt < 100; attempt++) {
        const std::string tmp =
            (slash == std::string::npos ? std::string() : dir) + "." + base + ".tmp-" +
            std::to_string(getpid()) + "-" + std::to_string(temp_counter.fetch_add(1));
        int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0) {
            *fd_out = fd;
            return tmp;
        }
        if (errno != EEXIST)
            raise(PLM_VDB_ERR_WRITE, format("%s: cannot create a file in folder %s: %s",
                                            path.c_str(), dir.c_str(), strerror(errno)));
    }
    raise(PLM_VDB_ERR_WRITE,
          format("%s: cannot find a free temporary file name in %s", path.c_str(), dir.c_str()));
}

void sync_folder(const std::string &path)
{
    const size_t slash = path.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash + 1);
    int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        (void)fsync(fd); // best effort: the rename itself already happened
        close(fd);
    }
}

void write_file(const std::string &path, const plm_vdb_grid *const *grids, int count,
                const plm_vdb_write_options &opt)
{
    uint32_t flags = openvdb::io::COMPRESS_ACTIVE_MASK;
    // C callers may pass any int: read it as one (loading an out-of-range value through the
    // C++ enum type is undefined behaviour), then validate.
    int compression;
    std::memcpy(&compression, &opt.compression, sizeof compression);
    switch (compression) {
    case PLM_VDB_COMPRESS_NONE: break;
    case PLM_VDB_COMPRESS_ZIP:
        if (!openvdb::io::Archive::hasZLibCompression())
            raise(PLM_VDB_ERR_UNSUPPORTED, path + ": this OpenVDB has no zip compression");
        flags |= openvdb::io::COMPRESS_ZIP;
        break;
    case PLM_VDB_COMPRESS_BLOSC:
        if (!openvdb::io::Archive::hasBloscCompression())
            raise(PLM_VDB_ERR_UNSUPPORTED, path + ": this OpenVDB has no blosc compression");
        flags |= openvdb::io::COMPRESS_BLOSC;
        break;
    default:
        raise(PLM_VDB_ERR_ARGUMENT,
              format("%s: unknown compression %d", path.c_str(), compression));
    }
    openvdb::GridCPtrVec list;
    for (int i = 0; i < count; i++) {
        const plm_vdb_grid *g = grids[i];
        if (!g)
            raise(PLM_VDB_ERR_ARGUMENT, format("%s: grid %d is NULL", path.c_str(), i));
        // No ensure_fresh here: writes only read their grids, so several may share one.
        if (!g->grid || !(g->grid->isType<FloatGrid>() || g->grid->isType<Vec3SGrid>()))
            raise(PLM_VDB_ERR_UNSUPPORTED,
                  format("%s: %s has value type %s; only float and vec3s grids are written",
                         path.c_str(), grid_label(*g).c_str(), g->type_name.c_str()));
        // A shallow copy shares the tree and owns its metadata, so the half flag stays ours.
        GridBase::Ptr copy = g->grid->copyGrid();
        copy->setSaveFloatAsHalf(opt.half_float != 0);
        list.push_back(copy);
    }
    openvdb::MetaMap file_meta;
    for (int i = 0; i < opt.file_meta_count; i++) {
        const plm_vdb_meta &m = opt.file_meta[i];
        if (!m.key || !m.type || !m.value)
            raise(PLM_VDB_ERR_ARGUMENT,
                  format("%s: file metadata entry %d has a NULL field", path.c_str(), i));
        file_meta.insertMeta(m.key, *meta_from_text(m.key, m.type, m.value));
    }
    Writer writer;
    writer.setCompression(flags);
    int fd = -1;
    const std::string tmp = make_temp(path, &fd);
    try {
        {
            std::ofstream os;
            os.exceptions(std::ios_base::failbit | std::ios_base::badbit);
            os.open(tmp, std::ios_base::out | std::ios_base::binary | std::ios_base::trunc);
            writer.write_to(os, list, file_meta);
            os.flush();
            os.close();
        }
        if (!opt.no_fsync && fsync(fd) != 0)
            raise(PLM_VDB_ERR_WRITE,
                  format("%s: cannot flush to disk: %s", path.c_str(), strerror(errno)));
        close(fd);
        fd = -1;
        if (rename(tmp.c_str(), path.c_str()) != 0)
            raise(PLM_VDB_ERR_WRITE,
                  format("%s: cannot replace the destination: %s", path.c_str(),
                         strerror(errno)));
    } catch (const std::ios_base::failure &) {
        const int e = errno;
        if (fd >= 0)
            close(fd);
        unlink(tmp.c_str());
        raise(PLM_VDB_ERR_WRITE,
              format("%s: writing failed: %s", path.c_str(), e ? strerror(e) : "stream error"));
    } catch (...) {
        if (fd >= 0)
            close(fd);
        unlink(tmp.c_str());
        throw;
    }
    if (!opt.no_fsync)
        sync_folder(path);
}

} // namespace

extern "C" {

plm_vdb_status plm_vdb_grid_create(const plm_vdb_grid_desc *desc, plm_vdb_grid **out,
                                   plm_vdb_error *err)
{
    if (!out)
        return report(err, PLM_VDB_ERR_ARGUMENT, "plm_vdb_grid_create: out is NULL");
    *out = nullptr;
    if (!desc)
        return report(err, PLM_VDB_ERR_ARGUMENT, "plm_vdb_grid_create: desc is NULL");
    plm_vdb_grid *g = nullptr;
    const char *name = desc->name ? desc->name : "";
    plm_vdb_status s = guarded(err, PLM_VDB_ERR_INTERNAL, format("grid \"%s\"", name), [&] {
        init_openvdb();
        plm_vdb_grid_desc d = *desc;
        d.name = name;
        g = new plm_vdb_grid;
        g->created = true;
        g->name = name;
        for (int k = 0; k < 3; k++)
            if (!std::isfinite(d.background[k]))
                raise(PLM_VDB_ERR_ARGUMENT,
                      format("grid \"%s\": background is not finite", name));
        if (d.type == PLM_VDB_TYPE_FLOAT) {
            g->grid = FloatGrid::create(d.background[0]);
        } else if (d.type == PLM_VDB_TYPE_VEC3) {
            Vec3SGrid::Ptr v = Vec3SGrid::create(
                openvdb::Vec3s(d.background[0], d.background[1], d.background[2]));
            if (d.vector_type < 0 || d.vector_type >= openvdb::NUM_VEC_TYPES)
                raise(PLM_VDB_ERR_ARGUMENT,
                      format("grid \"%s\": unknown vector type %d", name, d.vector_type));
            v->setVectorType(openvdb::VecType(d.vector_type));
            g->grid = v;
        } else {
            raise(PLM_VDB_ERR_UNSUPPORTED,
                  format("grid \"%s\": value type %d cannot be created (float or vec3)", name,
                         int(d.type)));
        }
        g->grid->setName(name);
        g->grid->setGridClass(vdb_class(d.grid_class));
        g->grid->setTransform(make_transform(d));
    });
    if (s != PLM_VDB_OK) {
        delete g;
        return s;
    }
    *out = g;
    return s;
}

void plm_vdb_grid_free(plm_vdb_grid *grid)
{
    if (grid && grid->created)
        delete grid;
}

plm_vdb_status plm_vdb_grid_add_leaf(plm_vdb_grid *grid, const int32_t origin[3],
                                     const float *values, const uint64_t mask[8],
                                     plm_vdb_error *err)
{
    if (!grid || !origin || !values)
        return report(err, PLM_VDB_ERR_ARGUMENT, "plm_vdb_grid_add_leaf: NULL argument");
    if (!grid->created)
        return report(err, PLM_VDB_ERR_ARGUMENT,
                      "plm_vdb_grid_add_leaf: " + grid_label(*grid) +
                          " belongs to an open file; only created grids take leaves");
    if ((origin[0] & 7) || (origin[1] & 7) || (origin[2] & 7))
        return report(err, PLM_VDB_ERR_ARGUMENT,
                      format("grid \"%s\": leaf origin (%d, %d, %d) is not a multiple of 8",
                             grid->name.c_str(), origin[0], origin[1], origin[2]));
    return guarded(err, PLM_VDB_ERR_INTERNAL, grid_label(*grid), [&] {
        grid->dirty = true;
        if (openvdb::GridBase::grid<FloatGrid>(grid->grid))
            add_leaf_t<FloatGrid>(*grid, origin, values, mask);
        else
            add_leaf_t<Vec3SGrid>(*grid, origin, values, mask);
    });
}

} // extern "C"

namespace {
// The argument check of the calls that change a created grid after its leaves.
plm_vdb_status check_created(const plm_vdb_grid *grid, const char *fn, plm_vdb_error *err)
{
    if (!grid)
        return report(err, PLM_VDB_ERR_ARGUMENT, std::string(fn) + ": NULL grid");
    if (!grid->created)
        return report(err, PLM_VDB_ERR_ARGUMENT,
                      std::string(fn) + ": " + grid_label(*grid) + " belongs to an open file");
    return PLM_VDB_OK;
}
} // namespace

extern "C" {

plm_vdb_status plm_vdb_grid_sign_fill(plm_vdb_grid *grid, plm_vdb_error *err)
{
    if (plm_vdb_status s = check_created(grid, "plm_vdb_grid_sign_fill", err))
        return s;
    FloatGrid::Ptr fg = openvdb::GridBase::grid<FloatGrid>(grid->grid);
    if (!fg)
        return report(err, PLM_VDB_ERR_ARGUMENT,
                      format("grid \"%s\": only float grids hold signed distances", grid->name.c_str()));
    if (!(fg->background() > 0.0f))
        return report(err, PLM_VDB_ERR_ARGUMENT,
                      format("grid \"%s\": a level set needs a positive background (it has %g)",
                             grid->name.c_str(), double(fg->background())));
    return guarded(err, PLM_VDB_ERR_INTERNAL, grid_label(*grid), [&] {
        grid->dirty = true;
        // single-threaded: the bytes written must not depend on scheduling
        openvdb::tools::signedFloodFill(fg->tree(), /*threaded=*/false);
    });
}

plm_vdb_status plm_vdb_grid_prune(plm_vdb_grid *grid, plm_vdb_error *err)
{
    if (plm_vdb_status s = check_created(grid, "plm_vdb_grid_prune", err))
        return s;
    return guarded(err, PLM_VDB_ERR_INTERNAL, grid_label(*grid), [&] {
        grid->dirty = true;
        // exact (tolerance 0), and on one thread like the sign fill
        if (FloatGrid::Ptr fg = openvdb::GridBase::grid<FloatGrid>(grid->grid))
            openvdb::tools::prune(fg->tree(), 0.0f, false);
        else if (Vec3SGrid::Ptr vg = openvdb::GridBase::grid<Vec3SGrid>(grid->grid))
            openvdb::tools::prune(vg->tree(), openvdb::Vec3s(0.0f), false);
    });
}

plm_vdb_status plm_vdb_grid_set_meta(plm_vdb_grid *grid, const char *key, const char *type,
                                     const char *value, plm_vdb_error *err)
{
    if (!grid || !key || !type || !value)
        return report(err, PLM_VDB_ERR_ARGUMENT, "plm_vdb_grid_set_meta: NULL argument");
    if (!grid->created)
        return report(err, PLM_VDB_ERR_ARGUMENT,
                      "plm_vdb_grid_set_meta: " + grid_label(*grid) + " belongs to an open file");
    if (!*key || reserved_key(key))
        return report(err, PLM_VDB_ERR_ARGUMENT,
                      format("grid \"%s\": metadata key \"%s\" is reserved or empty",
                             grid->name.c_str(), key));
    return guarded(err, PLM_VDB_ERR_INTERNAL, grid_label(*grid), [&] {
        openvdb::Metadata::Ptr m = meta_from_text(key, type, value);
        grid->dirty = true;
        grid->grid->removeMeta(key);
        grid->grid->insertMeta(key, *m);
    });
}

plm_vdb_status plm_vdb_write(const char *path, const plm_vdb_grid *const *grids, int count,
                             const plm_vdb_write_options *options, plm_vdb_error *err)
{
    if (!path || !*path)
        return report(err, PLM_VDB_ERR_ARGUMENT, "plm_vdb_write: empty path");
    if (count < 0 || (count > 0 && !grids))
        return report(err, PLM_VDB_ERR_ARGUMENT, format("%s: bad grid list", path));
    plm_vdb_write_options opt{};
    if (options)
        opt = *options;
    if (opt.file_meta_count < 0 || (opt.file_meta_count > 0 && !opt.file_meta))
        return report(err, PLM_VDB_ERR_ARGUMENT, format("%s: bad file metadata list", path));
    return guarded(err, PLM_VDB_ERR_WRITE, std::string(path), [&] {
        init_openvdb();
        write_file(path, grids, count, opt);
    });
}

} // extern "C"
