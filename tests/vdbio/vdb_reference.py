#!/usr/bin/python3
"""Reference figures for vdbio's tests, computed by OpenVDB's own Python binding (pyopenvdb).

  vdb_reference.py dump FILE OUT.json   every grid of FILE: header figures, metadata, transform
                                        samples, every leaf (512 values + active flags), tiles
  vdb_reference.py fixtures DIR         writes small VDB files that the shared data lacks:
                                        a level set, active tiles, half floats, a bool grid

Exit status 77 when pyopenvdb cannot be imported (the C tests then skip), 1 on any other failure.
Grids are listed in pyopenvdb's order (sorted by name; grids of one name keep their file order).
"""
import json
import sys

try:
    import pyopenvdb as vdb
except ImportError as e:  # the C test prints this and skips
    print("pyopenvdb is not available to %s: %s" % (sys.executable, e), file=sys.stderr)
    sys.exit(77)

LEAF_DEPTH = 3


def jsonable(v):
    if isinstance(v, bool):
        return v
    if isinstance(v, (int, float, str)):
        return v
    if isinstance(v, (tuple, list)):
        return [jsonable(x) for x in v]
    return str(v)


def leaf_origins(grid):
    origins = set()
    for item in grid.citerOnValues():
        if item["depth"] == LEAF_DEPTH:
            x, y, z = item["min"]
            origins.add((x & ~7, y & ~7, z & ~7))
    if len(origins) != grid.leafCount():
        # some leaves hold no active voxel: find them through their inactive voxels
        for item in grid.citerOffValues():
            if item["depth"] == LEAF_DEPTH:
                x, y, z = item["min"]
                origins.add((x & ~7, y & ~7, z & ~7))
    return sorted(origins)


def dump_grid(grid):
    acc = grid.getConstAccessor()
    leaves = {}
    for ox, oy, oz in leaf_origins(grid):
        values, active = [], []
        for x in range(8):
            for y in range(8):
                for z in range(8):
                    xyz = (ox + x, oy + y, oz + z)
                    values.append(jsonable(acc.getValue(xyz)))
                    active.append(1 if acc.isValueOn(xyz) else 0)
        leaves["%d,%d,%d" % (ox, oy, oz)] = {"values": values, "active": active}
    tiles = []
    for item in grid.citerOnValues():
        if item["depth"] != LEAF_DEPTH:
            tiles.append({"min": list(item["min"]), "max": list(item["max"]),
                          "value": jsonable(item["value"])})
    samples = []
    for ijk in [(0, 0, 0), (1, 2, 3), (-7, 11, 5), (100, -50, 25)]:
        samples.append({"index": list(ijk), "world": list(grid.transform.indexToWorld(ijk))})
    bmin, bmax = grid.evalActiveVoxelBoundingBox()
    return {
        "name": grid.name,
        "value_type": grid.valueTypeName,
        "class": grid.gridClass,
        "background": jsonable(grid.background),
        "saved_as_half": bool(grid.saveFloatAsHalf),
        "active_voxel_count": grid.activeVoxelCount(),
        "leaf_count": grid.leafCount(),
        "bbox_min": list(bmin),
        "bbox_max": list(bmax),
        "voxel_size": list(grid.transform.voxelSize()),
        "is_linear": bool(grid.transform.isLinear),
        "transform_samples": samples,
        "metadata": {k: jsonable(v) for k, v in grid.metadata.items()},
        "leaves": leaves,
        "tiles": tiles,
    }


def dump(path, out):
    grids, file_meta = vdb.readAll(path)
    data = {
        "file": path,
        "file_metadata": {k: jsonable(v) for k, v in file_meta.items()},
        "grids": [dump_grid(g) for g in grids],
    }
    with open(out, "w") as f:
        json.dump(data, f)


def fixtures(folder):
    # Level set: class level set, positive background, inside voxels hold -background.
    ls = vdb.createLevelSetSphere(radius=6.0, center=(1.0, 2.0, 3.0), voxelSize=0.25,
                                  halfWidth=3.0)
    ls.name = "surface"
    vdb.write(folder + "/fixture_levelset.vdb", grids=[ls])

    # Active tiles at each internal level and at the root, next to ordinary leaves.
    t = vdb.FloatGrid(background=0.5)
    t.name = "tiles"
    t.gridClass = vdb.GridClass.FOG_VOLUME
    t.fill((0, 0, 0), (127, 127, 127), 2.5, True)        # one 128^3 tile (lower internal)
    t.fill((200, 0, 0), (207, 7, 7), 1.5, True)          # one 8^3 tile
    acc = t.getAccessor()
    for i in range(20):
        acc.setValueOn((300 + i, -9 + i, 17 - i), 0.25 * i)  # ordinary leaves
    t.transform = vdb.createLinearTransform(voxelSize=0.5)
    v = vdb.Vec3SGrid(background=(0.0, 0.0, 0.0))
    v.name = "vtiles"
    v.fill((-16, -16, -16), (-9, -9, -9), (1.0, -2.0, 3.0), True)
    vacc = v.getAccessor()
    vacc.setValueOn((5, 6, 7), (0.5, 0.25, -0.125))
    vdb.write(folder + "/fixture_tiles.vdb", grids=[t, v])

    # Half floats: stored as 16-bit, read as f32.
    h = vdb.FloatGrid(background=0.0)
    h.name = "density"
    h.gridClass = vdb.GridClass.FOG_VOLUME
    hacc = h.getAccessor()
    for i in range(200):
        hacc.setValueOn((i % 13, (i * 7) % 17, (i * 3) % 11), 0.001 + i / 3.0)
    h.saveFloatAsHalf = True
    hv = vdb.Vec3SGrid()
    hv.name = "vel"
    hvacc = hv.getAccessor()
    for i in range(50):
        hvacc.setValueOn((i, -i, 2 * i), (i / 7.0, -i / 9.0, 1.0 / (i + 1)))
    hv.saveFloatAsHalf = True
    vdb.write(folder + "/fixture_half.vdb", grids=[h, hv])

    # An unsupported value type next to a supported one.
    b = vdb.BoolGrid()
    b.name = "mask"
    bacc = b.getAccessor()
    for i in range(30):
        bacc.setValueOn((i, i, i), True)
    f = vdb.FloatGrid()
    f.name = "density"
    f.getAccessor().setValueOn((1, 2, 3), 4.0)
    vdb.write(folder + "/fixture_mixed.vdb", grids=[b, f], metadata={"creator": "vdb_reference.py"})


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "dump":
        dump(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 3 and sys.argv[1] == "fixtures":
        fixtures(sys.argv[2])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
