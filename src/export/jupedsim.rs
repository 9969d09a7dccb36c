//! Trajectories in JuPedSim's SQLite layout (database version 2), the file PedPy's
//! `load_trajectory_from_jupedsim_sqlite` and `load_walkable_area_from_jupedsim_sqlite` read:
//!
//! - `trajectory_data(frame INTEGER, id INTEGER, pos_x REAL, pos_y REAL, ori_x REAL, ori_y REAL)`,
//!   one row per agent on the map per frame, indexed on `(frame, id)`; the orientation is the
//!   unit walking direction (the last one for an agent standing still, `(1, 0)` before its
//!   first step);
//! - `metadata(key TEXT PRIMARY KEY, value TEXT)` with `version` = 2, `fps` (frames per
//!   second of simulated time) and the positions' bounding box `xmin`, `xmax`, `ymin`, `ymax`;
//! - `geometry(hash INTEGER, wkt TEXT)`: the walkable area (the open cells of the grid, merged
//!   into polygons with holes: [`walkable_wkt`]);
//! - `frame_data(frame INTEGER, geometry_hash INTEGER)`: the geometry of each frame (always the
//!   one row of `geometry`).
//!
//! The database is built in a temporary file beside the target as the run goes and renamed
//! into place by `SqliteTrajectories::finish`: an interrupted run leaves no half file. The
//! writer needs the `sqlite` feature (on with the default `cli`); [`walkable_wkt`] does not.

use crate::grid::Grid;
use ndarray::ArrayView2;
use std::collections::HashMap;
use std::fmt::Write as _;
#[cfg(feature = "sqlite")]
use {
    crate::error::{Error, Result},
    crate::sim::Simulation,
    rusqlite::{Connection, params},
    std::path::{Path, PathBuf},
};

/// The JuPedSim SQLite database version written (the one with `geometry.hash` and
/// `frame_data`).
pub const DATABASE_VERSION: u32 = 2;

/// The hash the one geometry row carries (JuPedSim stores Python's `hash` of the WKT; readers
/// only match `frame_data.geometry_hash` against it).
#[cfg(feature = "sqlite")]
const GEOMETRY_HASH: i64 = 1;

/// A trajectory database being written.
#[cfg(feature = "sqlite")]
pub struct SqliteTrajectories {
    path: PathBuf,
    tmp: PathBuf,
    conn: Option<Connection>,
    frame: i64,
    /// Last walking direction per agent id (the orientation of an agent standing still).
    heading: HashMap<u32, (f64, f64)>,
    bounds: [f64; 4],
}

#[cfg(feature = "sqlite")]
impl std::fmt::Debug for SqliteTrajectories {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteTrajectories")
            .field("path", &self.path)
            .field("frame", &self.frame)
            .finish_non_exhaustive()
    }
}

#[cfg(feature = "sqlite")]
impl SqliteTrajectories {
    /// Starts the database for `path` (in a temporary file beside it) with `fps` frames per
    /// second of simulated time and the walkable area `walkable` (WKT, [`scene_walkable_wkt`]).
    pub fn create(path: &Path, fps: f64, walkable: &str) -> Result<Self> {
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        if path.is_dir() {
            return Err(Error::Io {
                path: path.to_path_buf(),
                source: std::io::Error::other("is a folder: expected the path of the file to write"),
            });
        }
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
        let _ = std::fs::remove_file(&tmp);
        let mut this = Self {
            path: path.to_path_buf(),
            tmp: tmp.clone(),
            conn: None,
            frame: 0,
            heading: HashMap::new(),
            bounds: [f64::INFINITY, f64::NEG_INFINITY, f64::INFINITY, f64::NEG_INFINITY],
        };
        let conn = Connection::open(&tmp).map_err(|e| this.error(e))?;
        // The rename makes the file atomic: no journal, no syncs during the run.
        let schema = format!(
            "PRAGMA journal_mode = OFF;
             PRAGMA synchronous = OFF;
             CREATE TABLE trajectory_data (frame INTEGER NOT NULL, id INTEGER NOT NULL,
                 pos_x REAL NOT NULL, pos_y REAL NOT NULL, ori_x REAL NOT NULL, ori_y REAL NOT NULL);
             CREATE TABLE metadata (key TEXT NOT NULL UNIQUE PRIMARY KEY, value TEXT NOT NULL);
             CREATE TABLE geometry (hash INTEGER NOT NULL, wkt TEXT NOT NULL);
             CREATE TABLE frame_data (frame INTEGER NOT NULL, geometry_hash INTEGER NOT NULL);
             INSERT INTO metadata VALUES ('version', '{DATABASE_VERSION}');"
        );
        conn.execute_batch(&schema).map_err(|e| this.error(e))?;
        conn.execute(
            "INSERT INTO metadata VALUES ('fps', ?1)",
            params![fps.to_string()],
        )
        .map_err(|e| this.error(e))?;
        conn.execute(
            "INSERT INTO geometry VALUES (?1, ?2)",
            params![GEOMETRY_HASH, walkable],
        )
        .map_err(|e| this.error(e))?;
        this.conn = Some(conn);
        Ok(this)
    }

    fn error(&self, e: rusqlite::Error) -> Error {
        Error::Io {
            path: self.path.clone(),
            source: std::io::Error::other(e.to_string()),
        }
    }

    /// Frames written so far.
    pub fn frames(&self) -> i64 {
        self.frame
    }

    /// Appends one frame: every agent on the map.
    pub fn record(&mut self, sim: &Simulation) -> Result<()> {
        let a = &sim.agents;
        let frame = self.frame;
        let conn = self.conn.as_mut().expect("open until finished");
        let result = (|| {
            let tx = conn.transaction()?;
            {
                let mut rows =
                    tx.prepare_cached("INSERT INTO trajectory_data VALUES (?1, ?2, ?3, ?4, ?5, ?6)")?;
                for i in 0..a.len() {
                    let (vx, vy) = (a.vx[i] as f64, a.vy[i] as f64);
                    let speed = vx.hypot(vy);
                    let ori = if speed > 1e-6 {
                        let o = (vx / speed, vy / speed);
                        self.heading.insert(a.id[i], o);
                        o
                    } else {
                        self.heading.get(&a.id[i]).copied().unwrap_or((1.0, 0.0))
                    };
                    let (x, y) = (a.x[i] as f64, a.y[i] as f64);
                    rows.execute(params![frame, a.id[i], x, y, ori.0, ori.1])?;
                    let b = &mut self.bounds;
                    (b[0], b[1], b[2], b[3]) = (b[0].min(x), b[1].max(x), b[2].min(y), b[3].max(y));
                }
                tx.execute(
                    "INSERT INTO frame_data VALUES (?1, ?2)",
                    params![frame, GEOMETRY_HASH],
                )?;
            }
            tx.commit()
        })();
        result.map_err(|e| self.error(e))?;
        self.frame += 1;
        Ok(())
    }

    /// Writes the bounding box and the index, closes the database and renames it into place.
    pub fn finish(mut self) -> Result<()> {
        let conn = self.conn.take().expect("open until finished");
        let [xmin, xmax, ymin, ymax] = self.bounds;
        let result = (|| {
            let mut meta = conn.prepare("INSERT OR REPLACE INTO metadata VALUES (?1, ?2)")?;
            for (key, value) in [("xmin", xmin), ("xmax", xmax), ("ymin", ymin), ("ymax", ymax)] {
                if value.is_finite() {
                    meta.execute(params![key, value.to_string()])?;
                }
            }
            drop(meta);
            conn.execute_batch("CREATE INDEX frame_id_idx ON trajectory_data(frame, id);")?;
            conn.close().map_err(|(_, e)| e)
        })();
        if let Err(e) = result {
            let _ = std::fs::remove_file(&self.tmp);
            return Err(self.error(e));
        }
        let io = |source| Error::Io {
            path: self.path.clone(),
            source,
        };
        std::fs::File::open(&self.tmp)
            .and_then(|f| f.sync_all())
            .map_err(io)?;
        std::fs::rename(&self.tmp, &self.path).map_err(|source| {
            let _ = std::fs::remove_file(&self.tmp);
            Error::Io {
                path: self.path.clone(),
                source,
            }
        })
    }
}

#[cfg(feature = "sqlite")]
impl Drop for SqliteTrajectories {
    /// Closes the database and removes the temporary file: after an error, or after
    /// [`SqliteTrajectories::finish`] renamed it (then there is nothing left to remove).
    fn drop(&mut self) {
        drop(self.conn.take());
        let _ = std::fs::remove_file(&self.tmp);
    }
}

/// The walkable area the walkers of `scene` walk on, as WKT: the outline as drawn on a map with
/// exact walls whose obstacles are shapes (`"walls": "exact"`: bodies meet its edges, so every
/// centre lies inside it), else the open cells ([`walkable_wkt`]). Exterior rings
/// counter-clockwise, holes clockwise.
pub fn scene_walkable_wkt(scene: &crate::scene::Scene) -> String {
    use geo::orient::{Direction, Orient};
    use wkt::ToWkt;
    match (&scene.outline, scene.exact_walls) {
        (Some(outline), true) => {
            let walkable = outline.walkable.orient(Direction::Default);
            match walkable.0.len() {
                0 => "POLYGON EMPTY".to_string(),
                1 => walkable.0[0].wkt_string(),
                _ => walkable.wkt_string(),
            }
        }
        _ => walkable_wkt(&scene.grid, scene.obstacle.view()),
    }
}

/// The walkable area of a grid as WKT: the cells that are not obstacles, merged into one
/// `POLYGON` (with holes where obstacles lie inside) or a `MULTIPOLYGON` when the open cells
/// fall into several pieces (cells joined by a side; cells touching at a corner only are
/// separate pieces). Coordinates in metres, exterior rings counter-clockwise, holes clockwise.
pub fn walkable_wkt(grid: &Grid, obstacle: ArrayView2<bool>) -> String {
    let polygons = walkable_polygons(grid, obstacle);
    let ring = |r: &Vec<(usize, usize)>| {
        let mut s = String::from("(");
        for (k, &(x, y)) in r.iter().chain(r.first()).enumerate() {
            if k > 0 {
                s.push_str(", ");
            }
            write!(s, "{} {}", x as f64 * grid.cell_size, y as f64 * grid.cell_size).expect("to a String");
        }
        s.push(')');
        s
    };
    let polygon =
        |p: &Vec<Vec<(usize, usize)>>| format!("({})", p.iter().map(ring).collect::<Vec<_>>().join(", "));
    match polygons.len() {
        0 => "POLYGON EMPTY".to_string(),
        1 => format!("POLYGON {}", polygon(&polygons[0])),
        _ => format!(
            "MULTIPOLYGON ({})",
            polygons.iter().map(polygon).collect::<Vec<_>>().join(", ")
        ),
    }
}

/// The open cells' outline as polygons, each a list of rings (exterior first, then holes) of
/// grid vertices `(column, row)`, with collinear vertices dropped.
pub fn walkable_polygons(grid: &Grid, obstacle: ArrayView2<bool>) -> Vec<Vec<Vec<(usize, usize)>>> {
    let (rows, cols) = (grid.rows, grid.cols);
    let open = |r: i64, c: i64| {
        r >= 0 && c >= 0 && (r as usize) < rows && (c as usize) < cols && !obstacle[[r as usize, c as usize]]
    };
    // Pieces: 4-connected components of open cells.
    let mut piece = vec![usize::MAX; rows * cols];
    let mut pieces = 0;
    for start in 0..rows * cols {
        if piece[start] != usize::MAX || !open((start / cols) as i64, (start % cols) as i64) {
            continue;
        }
        let mut stack = vec![start];
        piece[start] = pieces;
        while let Some(k) = stack.pop() {
            let (r, c) = ((k / cols) as i64, (k % cols) as i64);
            for (dr, dc) in [(0, 1), (1, 0), (0, -1), (-1, 0)] {
                let (nr, nc) = (r + dr, c + dc);
                if open(nr, nc) {
                    let n = nr as usize * cols + nc as usize;
                    if piece[n] == usize::MAX {
                        piece[n] = pieces;
                        stack.push(n);
                    }
                }
            }
        }
        pieces += 1;
    }
    // Directed boundary edges with the open cell on their left: from vertex to vertex, with
    // the piece of that cell. Vertex (x, y) is the corner at column x, row y.
    let mut out: HashMap<(usize, usize), Vec<((usize, usize), usize)>> = HashMap::new();
    for r in 0..rows {
        for c in 0..cols {
            if !open(r as i64, c as i64) {
                continue;
            }
            let p = piece[r * cols + c];
            let (ri, ci) = (r as i64, c as i64);
            if !open(ri - 1, ci) {
                out.entry((c, r)).or_default().push(((c + 1, r), p));
            }
            if !open(ri, ci + 1) {
                out.entry((c + 1, r)).or_default().push(((c + 1, r + 1), p));
            }
            if !open(ri + 1, ci) {
                out.entry((c + 1, r + 1)).or_default().push(((c, r + 1), p));
            }
            if !open(ri, ci - 1) {
                out.entry((c, r + 1)).or_default().push(((c, r), p));
            }
        }
    }
    // Walk the loops; at a vertex with two ways on, keep to the same piece (a piece's cells
    // touching another's at a corner only are apart), preferring the left turn.
    let mut rings: Vec<Vec<Vec<(usize, usize)>>> = vec![Vec::new(); pieces];
    let mut starts: Vec<(usize, usize)> = out.keys().copied().collect();
    starts.sort_unstable();
    for s in starts {
        while let Some(&(first, p)) = out.get(&s).and_then(|v| v.first()) {
            let mut ring = vec![s];
            out.get_mut(&s).expect("listed").remove(0);
            let (mut prev, mut at) = (s, first);
            while at != s {
                ring.push(at);
                let ways = out.get_mut(&at).expect("every boundary vertex has a way on");
                let dir_in = (at.0 as i64 - prev.0 as i64, at.1 as i64 - prev.1 as i64);
                let turn = |to: (usize, usize)| {
                    let d = (to.0 as i64 - at.0 as i64, to.1 as i64 - at.1 as i64);
                    // Left turn first (cross product positive), then straight, then right.
                    -(dir_in.0 * d.1 - dir_in.1 * d.0)
                };
                let k = (0..ways.len())
                    .filter(|&k| ways[k].1 == p)
                    .min_by_key(|&k| turn(ways[k].0))
                    .expect("a piece's outline closes");
                let (next, _) = ways.remove(k);
                (prev, at) = (at, next);
            }
            rings[p].push(simplify(ring));
        }
    }
    rings
        .into_iter()
        .map(|mut rs| {
            // The exterior is the ring of positive (counter-clockwise) area; the others are holes.
            let k = (0..rs.len())
                .max_by(|&a, &b| signed_area(&rs[a]).total_cmp(&signed_area(&rs[b])))
                .expect("a piece has an outline");
            let exterior = rs.remove(k);
            let mut polygon = vec![exterior];
            polygon.extend(rs);
            polygon
        })
        .collect()
}

/// Drops the vertices where a ring goes straight on.
fn simplify(ring: Vec<(usize, usize)>) -> Vec<(usize, usize)> {
    let n = ring.len();
    (0..n)
        .filter(|&i| {
            let (a, b, c) = (ring[(i + n - 1) % n], ring[i], ring[(i + 1) % n]);
            let d1 = (b.0 as i64 - a.0 as i64, b.1 as i64 - a.1 as i64);
            let d2 = (c.0 as i64 - b.0 as i64, c.1 as i64 - b.1 as i64);
            d1.0 * d2.1 - d1.1 * d2.0 != 0
        })
        .map(|i| ring[i])
        .collect()
}

/// Twice the signed area of a ring (positive counter-clockwise).
fn signed_area(ring: &[(usize, usize)]) -> f64 {
    let n = ring.len();
    (0..n)
        .map(|i| {
            let (a, b) = (ring[i], ring[(i + 1) % n]);
            a.0 as f64 * b.1 as f64 - b.0 as f64 * a.1 as f64
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::Array2;

    #[test]
    fn an_open_rectangle_is_one_ring() {
        let grid = Grid::new(3, 2, 0.5);
        let obstacle = Array2::from_elem((2, 3), false);
        assert_eq!(
            walkable_wkt(&grid, obstacle.view()),
            "POLYGON ((0 0, 1.5 0, 1.5 1, 0 1, 0 0))"
        );
    }

    #[test]
    fn an_inner_obstacle_is_a_hole_and_corner_touches_split_pieces() {
        let grid = Grid::new(3, 3, 1.0);
        let mut obstacle = Array2::from_elem((3, 3), false);
        obstacle[[1, 1]] = true;
        let p = walkable_polygons(&grid, obstacle.view());
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].len(), 2, "exterior and one hole");
        assert!(signed_area(&p[0][0]) > 0.0 && signed_area(&p[0][1]) < 0.0);
        assert_eq!(signed_area(&p[0][0]) + signed_area(&p[0][1]), 2.0 * 8.0);
        // A chessboard of two open cells touching at a corner: two pieces.
        let grid = Grid::new(2, 2, 1.0);
        let obstacle = ndarray::array![[false, true], [true, false]];
        let wkt = walkable_wkt(&grid, obstacle.view());
        assert!(wkt.starts_with("MULTIPOLYGON"), "{wkt}");
        assert_eq!(walkable_polygons(&grid, obstacle.view()).len(), 2);
    }
}
