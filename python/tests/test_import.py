"""Floor plans through the Python package: load_map of DXF, WKT and GeoJSON files, and maps
from WKT text and shapely geometries, their areas held to shapely's."""

import json

import pytest
import shapely

import crowdfield

AREA = "POLYGON ((0 0, 12 0, 12 6, 0 6, 0 0), (5 2, 6 2, 6 4, 5 4, 5 2))"
EXIT = "POLYGON ((11 2, 12 2, 12 4, 11 4, 11 2))"
START = "POLYGON ((1 1, 4 1, 4 5, 1 5, 1 1))"


def _dxf(path, polylines):
    """A minimal ASCII DXF of closed LWPOLYLINEs: (layer, points) pairs."""
    lines = ["0", "SECTION", "2", "ENTITIES"]
    for handle, (layer, points) in enumerate(polylines, start=16):
        lines += ["0", "LWPOLYLINE", "5", f"{handle:X}", "8", layer, "90", str(len(points)), "70", "1"]
        for x, y in points:
            lines += ["10", str(x), "20", str(y)]
    lines += ["0", "ENDSEC", "0", "EOF"]
    path.write_text("\n".join(lines) + "\n")


def test_a_map_from_shapely_geometries_in_one_line():
    area = shapely.from_wkt(AREA)
    m = crowdfield.map_from_shapely(
        area, exits=[shapely.from_wkt(EXIT)], distributions=[shapely.from_wkt(START)], counts=[10]
    )
    s = m.import_summary
    assert abs(s["walkable_area"] - area.area) <= 1e-6 * area.area
    assert (s["exits"], s["distributions"], s["persons"]) == (1, 1, 10)
    sim = m.simulation(seed=0)
    sim.run()
    assert sim.report()["complete"]


def test_load_map_imports_wkt_geojson_and_dxf(tmp_path):
    wkt = tmp_path / "plan.wkt"
    wkt.write_text(f"GEOMETRYCOLLECTION (GEOMETRYCOLLECTION ({AREA}), GEOMETRYCOLLECTION ({EXIT}))")
    assert crowdfield.load_map(wkt).import_summary["walkable_area"] == shapely.from_wkt(AREA).area

    geo = tmp_path / "plan.geojson"
    features = [
        {"type": "Feature", "properties": {}, "geometry": shapely.geometry.mapping(shapely.from_wkt(AREA))},
        {"type": "Feature", "properties": {"layer": "exits"}, "geometry": shapely.geometry.mapping(shapely.from_wkt(EXIT))},
        {"type": "Feature", "properties": {"layer": "distributions"}, "geometry": shapely.geometry.mapping(shapely.from_wkt(START))},
    ]
    geo.write_text(json.dumps({"type": "FeatureCollection", "features": features}))
    m = crowdfield.load_map(geo, density=0.5)
    assert m.import_summary["persons"] == 6

    dxf = tmp_path / "plan.dxf"
    _dxf(dxf, [("JPS-WALKABLEAREA", [(0, 0), (12, 0), (12, 6), (0, 6)]), ("jps-exits", [(11, 2), (12, 2), (12, 4), (11, 4)])])
    assert crowdfield.load_map(dxf).import_summary["walkable_area"] == 72.0


def test_a_distribution_without_a_count_names_both_ways(tmp_path):
    with pytest.raises(ValueError, match=r"distribution 1.*number=20.*density"):
        crowdfield.map_from_wkt(AREA, exits=[EXIT], distributions=[START])
    with pytest.raises(ValueError, match="counts: 2 numbers for 1 distributions"):
        crowdfield.map_from_wkt(AREA, exits=[EXIT], distributions=[START], counts=[1, 2])
