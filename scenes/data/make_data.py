#!/usr/bin/python3
"""Writes the input volumes of scenes/smoke_collider.json with OpenVDB's own Python module, so
the scene reads files made by other software, as it would in production:

  ring_source.vdb      a fog volume "density": a soft torus lying in the xz plane
  sphere_collider.vdb  a narrow-band level set "collider": a sphere above the ring

Both use voxel size 1/128 with voxel (i, j, k)'s centre at ((i, j, k) + 0.5) / 128, the lattice
of the scene's fields. Run once with Debian's python3-openvdb and python3-numpy:
  /usr/bin/python3 scenes/data/make_data.py
"""
import os

import numpy as np
import pyopenvdb as vdb

H = 1.0 / 128.0
HERE = os.path.dirname(os.path.abspath(__file__))


def lattice_transform():
    t = vdb.createLinearTransform(voxelSize=H)
    t.translate((0.5 * H, 0.5 * H, 0.5 * H))
    return t


def ring_source():
    center, major, minor, soft = np.array([0.0, 0.1, 0.0]), 0.07, 0.025, 1.5 * H
    lo = np.floor((center - major - minor - 2 * soft) / H).astype(int)
    hi = np.ceil((center + major + minor + 2 * soft) / H).astype(int)
    idx = np.stack(np.meshgrid(*[np.arange(a, b) for a, b in zip(lo, hi)], indexing="ij"), -1)
    x = (idx + 0.5) * H - center
    ring = np.sqrt(x[..., 0] ** 2 + x[..., 2] ** 2) - major
    dist = np.sqrt(ring ** 2 + x[..., 1] ** 2) - minor
    dens = np.clip(0.5 - dist / soft, 0.0, 1.0).astype(np.float32)
    g = vdb.FloatGrid(0.0)
    g.copyFromArray(dens, ijk=tuple(int(v) for v in lo), tolerance=0.0)
    g.name = "density"
    g.gridClass = vdb.GridClass.FOG_VOLUME
    g.transform = lattice_transform()
    return g


def sphere_collider():
    center, radius = np.array([0.03, 0.36, 0.0]), 0.09
    # createLevelSetSphere puts voxel centres at index * H; the lattice transform moves them by
    # H / 2, so the sphere is built H / 2 lower to land where asked.
    g = vdb.createLevelSetSphere(radius=radius, center=tuple(center - 0.5 * H), voxelSize=H,
                                 halfWidth=3.0)
    g.name = "collider"
    g.transform = lattice_transform()
    return g


if __name__ == "__main__":
    vdb.write(os.path.join(HERE, "ring_source.vdb"), grids=[ring_source()])
    vdb.write(os.path.join(HERE, "sphere_collider.vdb"), grids=[sphere_collider()])
