//! The map view: shows the composed layers, the areas, the gradient arrows and the agents;
//! turns the pointer into tool commands; pans (middle or right drag, or the Pan tool) and
//! zooms (scroll wheel, about the pointer); reads out the cursor position.

use crate::command::{Command, SimCommand};
use crate::doc::{AreaShape, Document};
use crate::layers::LayerVisibility;
use crate::recompute::FieldSet;
use crate::tools::{BrushSettings, DAB_SPACING_FRACTION, Tool, dabs_along};
use crowdfield::agents::Agents;
use egui::{Color32, Pos2, Rect, Sense, Stroke, Vec2, pos2, vec2};

/// Zoom factor per point of scroll: about 1.2x per wheel notch (50 points).
pub const ZOOM_PER_SCROLL_POINT: f32 = 0.0037;
/// Zoom limits, pixels per metre: from a 10 km site in a window to a 1 cm cell filling it.
pub const ZOOM_RANGE: (f32, f32) = (0.05, 4000.0);
/// Gradient arrows are laid at least this many screen points apart.
pub const ARROW_SPACING_POINTS: f32 = 22.0;
/// Width of the dark rim around an agent's dot, points.
pub const AGENT_RIM_POINTS: f32 = 0.5;
/// A polygon click this close (screen points) to the first vertex closes the polygon.
pub const CLOSE_POLYGON_POINTS: f32 = 8.0;
/// Margin left around the map when it is fitted to the view, points.
pub const FIT_MARGIN_POINTS: f32 = 12.0;

/// The accessibility label of the map view (tests find it by this).
pub const MAP_VIEW_LABEL: &str = "Map view";

/// World (metres, y up) to screen (points, y down) mapping.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ViewTransform {
    /// World point shown at the centre of the view.
    pub center: [f64; 2],
    /// Zoom, screen points per metre.
    pub scale: f32,
}

impl ViewTransform {
    /// Screen position of world point `p` in a view occupying `rect`.
    pub fn to_screen(&self, rect: Rect, p: [f64; 2]) -> Pos2 {
        rect.center()
            + vec2(
                ((p[0] - self.center[0]) * self.scale as f64) as f32,
                (-(p[1] - self.center[1]) * self.scale as f64) as f32,
            )
    }

    /// World point under screen position `pos`.
    pub fn to_world(&self, rect: Rect, pos: Pos2) -> [f64; 2] {
        let d = pos - rect.center();
        [
            self.center[0] + d.x as f64 / self.scale as f64,
            self.center[1] - d.y as f64 / self.scale as f64,
        ]
    }

    /// The view that shows the whole `width x height` domain centred in `rect`.
    pub fn fit(rect: Rect, width: f64, height: f64) -> Self {
        let avail = (rect.size() - Vec2::splat(2.0 * FIT_MARGIN_POINTS)).max(Vec2::splat(1.0));
        let scale = (avail.x as f64 / width.max(1e-9)).min(avail.y as f64 / height.max(1e-9)) as f32;
        Self {
            center: [0.5 * width, 0.5 * height],
            scale: scale.clamp(ZOOM_RANGE.0, ZOOM_RANGE.1),
        }
    }
}

/// What the viewport draws besides the layer image.
pub struct ViewInputs<'a> {
    /// The map.
    pub doc: &'a Document,
    /// The latest fields, if any.
    pub fields: Option<&'a FieldSet>,
    /// Id of the recompute `fields` came from (the arrows are cached per fields).
    pub fields_id: Option<u64>,
    /// The composed layer image.
    pub texture: Option<&'a egui::TextureHandle>,
    /// Layer switches.
    pub vis: &'a LayerVisibility,
    /// The selected group.
    pub group: usize,
    /// The active tool.
    pub tool: Tool,
    /// Brush settings.
    pub brush: &'a BrushSettings,
    /// Agents of the running simulation.
    pub agents: Option<&'a Agents>,
    /// The exits the running simulation holds closed, by name (a run's switches; without a
    /// run, the map's own `closed` goals are drawn closed).
    pub closed_exits: Option<&'a [String]>,
    /// The running simulation's moving obstacles: handle and outline (world metres).
    pub obstacles: Option<&'a [(u32, Vec<[f64; 2]>)]>,
}

/// The map view's state.
#[derive(Clone, Debug)]
pub struct Viewport {
    /// The mapping; `None` until the first frame fits the map.
    pub view: Option<ViewTransform>,
    /// The screen rectangle of the view in the last frame.
    pub rect: Rect,
    /// World point under the pointer.
    pub cursor: Option<[f64; 2]>,
    /// Last dab of the current stroke.
    last_dab: Option<[f64; 2]>,
    /// Where the current rectangle drag started.
    rect_start: Option<[f64; 2]>,
    /// Vertices of the polygon being drawn.
    pub polygon: Vec<[f64; 2]>,
    /// The gradient arrows as last laid out, and what they were laid out for.
    arrows: Option<(ArrowKey, Vec<egui::Shape>)>,
    /// The moving obstacle being dragged (its handle).
    dragged_obstacle: Option<u32>,
}

/// What the gradient arrows depend on: they are laid out again only when it changes.
#[derive(Clone, Copy, Debug, PartialEq)]
struct ArrowKey {
    fields_id: Option<u64>,
    group: usize,
    grid: crowdfield::grid::Grid,
    view: ViewTransform,
    rect: Rect,
}

impl Default for Viewport {
    fn default() -> Self {
        Self {
            view: None,
            rect: Rect::NOTHING,
            cursor: None,
            last_dab: None,
            rect_start: None,
            polygon: Vec::new(),
            arrows: None,
            dragged_obstacle: None,
        }
    }
}

impl Viewport {
    /// Forgets the view so the next frame fits the map (after opening another map).
    pub fn refit(&mut self) {
        self.view = None;
        self.polygon.clear();
    }

    /// Draws the view and returns the edits the pointer made.
    pub fn ui(&mut self, ui: &mut egui::Ui, input: ViewInputs<'_>) -> Vec<Command> {
        let mut commands = Vec::new();
        let (response, painter) = ui.allocate_painter(ui.available_size(), Sense::click_and_drag());
        response.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Canvas, true, MAP_VIEW_LABEL));
        let rect = response.rect;
        self.rect = rect;
        let grid = input.doc.grid;
        let view = *self
            .view
            .get_or_insert_with(|| ViewTransform::fit(rect, grid.width(), grid.height()));
        painter.rect_filled(rect, 0.0, ui.visuals().extreme_bg_color);

        // Layers.
        let map_rect = Rect::from_two_pos(
            view.to_screen(rect, [0.0, grid.height()]),
            view.to_screen(rect, [grid.width(), 0.0]),
        );
        if let Some(tex) = input.texture {
            painter.image(
                tex.id(),
                map_rect,
                Rect::from_min_max(pos2(0.0, 0.0), pos2(1.0, 1.0)),
                Color32::WHITE,
            );
        }
        painter.rect_stroke(
            map_rect,
            0.0,
            Stroke::new(1.0, Color32::GRAY),
            egui::StrokeKind::Outside,
        );
        let painter = painter.with_clip_rect(rect);
        if input.vis.arrows {
            let key = ArrowKey {
                fields_id: input.fields_id,
                group: input.group,
                grid,
                view,
                rect,
            };
            if self.arrows.as_ref().is_none_or(|(k, _)| *k != key) {
                self.arrows = Some((key, arrow_shapes(rect, &view, &input)));
            }
            if let Some((_, shapes)) = &self.arrows {
                painter.extend(shapes.iter().cloned());
            }
        }
        if input.vis.areas {
            draw_areas(&painter, rect, &view, input.doc, input.group, input.closed_exits);
        }
        if let Some(agents) = input.agents {
            draw_agents(&painter, rect, &view, input.doc, agents);
        }
        for (_, outline) in input.obstacles.unwrap_or_default() {
            let points = outline.iter().map(|&p| view.to_screen(rect, p)).collect();
            painter.add(egui::Shape::convex_polygon(
                points,
                MOVING_OBSTACLE,
                Stroke::new(1.0, Color32::BLACK),
            ));
        }

        // Pointer.
        let hover = response.hover_pos();
        self.cursor = hover.map(|p| view.to_world(rect, p));
        let mut view = view;
        // With the Pan tool, a drag that starts on a moving obstacle of the running simulation
        // moves the obstacle instead of the view.
        if input.tool == Tool::Pan && response.drag_started_by(egui::PointerButton::Primary) {
            let origin = ui
                .input(|i| i.pointer.press_origin())
                .map(|p| view.to_world(rect, p));
            self.dragged_obstacle = origin.and_then(|at| {
                input
                    .obstacles
                    .unwrap_or_default()
                    .iter()
                    .find(|(_, outline)| crate::doc::point_in_polygon(outline, at[0], at[1]))
                    .map(|(h, _)| *h)
            });
        }
        if let Some(handle) = self.dragged_obstacle {
            if response.dragged_by(egui::PointerButton::Primary)
                && response.drag_delta() != vec2(0.0, 0.0)
                && let Some(p) = response.interact_pointer_pos()
            {
                commands.push(Command::Sim(SimCommand::MoveObstacle {
                    handle,
                    to: view.to_world(rect, p),
                }));
            }
            if response.drag_stopped() {
                self.dragged_obstacle = None;
            }
        }
        let pan_drag = response.dragged_by(egui::PointerButton::Middle)
            || response.dragged_by(egui::PointerButton::Secondary)
            || (input.tool == Tool::Pan
                && self.dragged_obstacle.is_none()
                && response.dragged_by(egui::PointerButton::Primary));
        if pan_drag {
            let d = response.drag_delta();
            view.center[0] -= d.x as f64 / view.scale as f64;
            view.center[1] += d.y as f64 / view.scale as f64;
        }
        if let Some(p) = hover {
            let scroll = ui.input(|i| i.smooth_scroll_delta.y);
            let zoom = ui.input(|i| i.zoom_delta()) * (scroll * ZOOM_PER_SCROLL_POINT).exp();
            if zoom != 1.0 {
                let before = view.to_world(rect, p);
                view.scale = (view.scale * zoom).clamp(ZOOM_RANGE.0, ZOOM_RANGE.1);
                let after = view.to_world(rect, p);
                view.center[0] += before[0] - after[0];
                view.center[1] += before[1] - after[1];
            }
        }
        self.view = Some(view);

        let primary_pos = response.interact_pointer_pos().map(|p| view.to_world(rect, p));
        // A drag is recognised only after the pointer moved a little: start it where the
        // button went down.
        let press_origin = ui
            .input(|i| i.pointer.press_origin())
            .map(|p| view.to_world(rect, p));
        let drag_start = press_origin.or(primary_pos);
        let tool = input.tool;
        if tool.brush_layer().is_some() {
            if response.drag_started_by(egui::PointerButton::Primary)
                || (response.clicked() && self.last_dab.is_none())
            {
                if let Some(at) = drag_start {
                    commands.push(Command::Dab {
                        tool,
                        at,
                        first: true,
                    });
                    self.last_dab = Some(at);
                }
            } else if response.dragged_by(egui::PointerButton::Primary)
                && let (Some(from), Some(to)) = (self.last_dab, primary_pos)
            {
                let spacing = (input.brush.radius * DAB_SPACING_FRACTION).max(0.5 * grid.cell_size);
                let moved = ((to[0] - from[0]).powi(2) + (to[1] - from[1]).powi(2)).sqrt();
                if moved >= spacing {
                    for at in dabs_along(from, to, spacing) {
                        commands.push(Command::Dab {
                            tool,
                            at,
                            first: false,
                        });
                    }
                    self.last_dab = Some(to);
                }
            }
            if (response.drag_stopped() || response.clicked()) && self.last_dab.is_some() {
                commands.push(Command::EndStroke);
                self.last_dab = None;
            }
            if let Some(p) = hover {
                painter.circle_stroke(
                    p,
                    (input.brush.radius as f32 * view.scale).max(2.0),
                    Stroke::new(1.0, Color32::WHITE),
                );
            }
        } else if tool.is_rect() {
            if response.drag_started_by(egui::PointerButton::Primary) {
                self.rect_start = drag_start;
            }
            if let (Some(a), Some(b)) = (self.rect_start, primary_pos.or(self.cursor)) {
                painter.rect_stroke(
                    Rect::from_two_pos(view.to_screen(rect, a), view.to_screen(rect, b)),
                    0.0,
                    Stroke::new(1.5, Color32::WHITE),
                    egui::StrokeKind::Middle,
                );
                if response.drag_stopped() {
                    self.rect_start = None;
                    commands.push(match tool {
                        Tool::WallRect => Command::WallRect { a, b },
                        Tool::Goal => Command::AddGoal {
                            group: input.group,
                            shape: AreaShape::rect_from_corners(a, b),
                        },
                        _ => Command::AddSpawn {
                            group: input.group,
                            shape: AreaShape::rect_from_corners(a, b),
                            count: input.brush.spawn_count,
                        },
                    });
                }
            }
        } else if tool == Tool::WallPolygon {
            if response.clicked()
                && let Some(at) = primary_pos
            {
                let closes = self.polygon.len() >= 3
                    && response.interact_pointer_pos().is_some_and(|p| {
                        (p - view.to_screen(rect, self.polygon[0])).length() < CLOSE_POLYGON_POINTS
                    });
                if closes {
                    commands.push(Command::WallPolygon {
                        points: std::mem::take(&mut self.polygon),
                    });
                } else {
                    self.polygon.push(at);
                }
            }
            if response.double_clicked() && self.polygon.len() >= 3 {
                commands.push(Command::WallPolygon {
                    points: std::mem::take(&mut self.polygon),
                });
            }
            if ui.input(|i| i.key_pressed(egui::Key::Escape)) {
                self.polygon.clear();
            }
            let mut pts: Vec<Pos2> = self.polygon.iter().map(|&p| view.to_screen(rect, p)).collect();
            if let Some(p) = hover
                && !pts.is_empty()
            {
                pts.push(p);
            }
            painter.add(egui::Shape::line(pts, Stroke::new(1.5, Color32::WHITE)));
        }
        commands
    }
}

fn color(rgb: [u8; 3]) -> Color32 {
    Color32::from_rgb(rgb[0], rgb[1], rgb[2])
}

fn shape_outline(
    painter: &egui::Painter,
    rect: Rect,
    view: &ViewTransform,
    shape: &AreaShape,
    stroke: Stroke,
) {
    match shape {
        AreaShape::Rect { min, max } => {
            painter.rect_stroke(
                Rect::from_two_pos(view.to_screen(rect, *min), view.to_screen(rect, *max)),
                0.0,
                stroke,
                egui::StrokeKind::Middle,
            );
        }
        AreaShape::Circle { center, radius } => {
            painter.circle_stroke(view.to_screen(rect, *center), *radius as f32 * view.scale, stroke);
        }
        AreaShape::Polygon { points } => {
            let pts = points.iter().map(|&p| view.to_screen(rect, p)).collect();
            painter.add(egui::Shape::closed_line(pts, stroke));
        }
    }
}

/// Colour of a moving obstacle of the running simulation.
const MOVING_OBSTACLE: Color32 = Color32::from_rgb(70, 80, 95);

/// Colour of a closed exit's outline and label.
const CLOSED_EXIT: Color32 = Color32::from_rgb(200, 30, 30);

/// Draws each group's goals (outline, name and width; a closed one in red, crossed, marked
/// closed) and spawn areas (outline and count). `closed_exits`: the names a run holds closed,
/// or `None` for the map's own `closed` flags.
fn draw_areas(
    painter: &egui::Painter,
    rect: Rect,
    view: &ViewTransform,
    doc: &Document,
    selected: usize,
    closed_exits: Option<&[String]>,
) {
    for (gi, g) in doc.groups.iter().enumerate() {
        let width = if gi == selected { 2.5 } else { 1.2 };
        for (ei, goal) in g.goals.iter().enumerate() {
            // The name the compiled scene gives it (`Document::to_scene`).
            let name = goal
                .name
                .clone()
                .unwrap_or_else(|| format!("{} goal {ei}", g.name));
            let closed = match closed_exits {
                Some(names) => names.contains(&name),
                None => goal.closed,
            };
            let ink = if closed { CLOSED_EXIT } else { color(g.color) };
            shape_outline(painter, rect, view, &goal.shape, Stroke::new(width, ink));
            let (lo, hi) = goal.shape.bounds();
            let c = view.to_screen(rect, [0.5 * (lo[0] + hi[0]), 0.5 * (lo[1] + hi[1])]);
            painter.circle_filled(c, 3.0, ink);
            if closed {
                let (a, b) = (view.to_screen(rect, lo), view.to_screen(rect, hi));
                let cross = Stroke::new(width, CLOSED_EXIT);
                painter.line_segment([a, b], cross);
                painter.line_segment([egui::pos2(a.x, b.y), egui::pos2(b.x, a.y)], cross);
            }
            let opening = goal.width.unwrap_or_else(|| (hi[0] - lo[0]).max(hi[1] - lo[1]));
            let label = if closed {
                format!("{name} · {opening:.2} m · closed")
            } else {
                format!("{name} · {opening:.2} m")
            };
            // Above the goal's centre, kept inside the view (a goal on the map's edge).
            let galley = painter.layout_no_wrap(label, egui::FontId::proportional(11.0), ink);
            let size = galley.size();
            let at = c + vec2(-0.5 * size.x, -8.0 - size.y);
            let at = egui::pos2(
                at.x.clamp(
                    rect.left() + 2.0,
                    (rect.right() - 2.0 - size.x).max(rect.left() + 2.0),
                ),
                at.y.clamp(
                    rect.top() + 2.0,
                    (rect.bottom() - 2.0 - size.y).max(rect.top() + 2.0),
                ),
            );
            painter.galley(at, galley, ink);
        }
        for spawn in &g.spawns {
            let faded = Color32::from_rgba_unmultiplied(g.color[0], g.color[1], g.color[2], 140);
            shape_outline(painter, rect, view, &spawn.shape, Stroke::new(width, faded));
            let (lo, hi) = spawn.shape.bounds();
            painter.text(
                view.to_screen(rect, [0.5 * (lo[0] + hi[0]), 0.5 * (lo[1] + hi[1])]),
                egui::Align2::CENTER_CENTER,
                spawn.count.to_string(),
                egui::FontId::proportional(11.0),
                color(g.color),
            );
        }
    }
}

/// The gradient arrows of the selected group, one every few cells (at least
/// `ARROW_SPACING_POINTS` apart on screen), as line segments.
fn arrow_shapes(rect: Rect, view: &ViewTransform, input: &ViewInputs<'_>) -> Vec<egui::Shape> {
    let mut shapes = Vec::new();
    let Some(gf) = input.fields.and_then(|f| f.groups.get(input.group)) else {
        return shapes;
    };
    let grid = input.doc.grid;
    if gf.grad.gx.dim() != grid.shape() {
        return shapes; // fields of the previous map, just after New or Open
    }
    let cell_points = grid.cell_size as f32 * view.scale;
    let k = (ARROW_SPACING_POINTS / cell_points.max(1e-3)).ceil().max(1.0) as usize;
    let len = 0.8 * k as f32 * cell_points;
    let stroke = Stroke::new(1.2, Color32::from_rgb(20, 20, 20));
    for r in (k / 2..grid.rows).step_by(k) {
        for c in (k / 2..grid.cols).step_by(k) {
            let (gx, gy) = (gf.grad.gx[(r, c)], gf.grad.gy[(r, c)]);
            let n = (gx * gx + gy * gy).sqrt();
            if !(n > 0.0 && n.is_finite()) {
                continue;
            }
            let (x, y) = grid.cell_center(r, c);
            let centre = view.to_screen(rect, [x, y]);
            if !rect.expand(len).contains(centre) {
                continue;
            }
            // Walk down the potential: -grad, and screen y points down.
            let dir = vec2(-gx / n, gy / n);
            arrow(&mut shapes, centre - 0.5 * len * dir, len * dir, stroke);
        }
    }
    shapes
}

/// The three segments of `egui::Painter::arrow` (shaft and two barbs), as shapes to keep.
fn arrow(out: &mut Vec<egui::Shape>, origin: Pos2, vec: Vec2, stroke: Stroke) {
    let rot = egui::emath::Rot2::from_angle(std::f32::consts::TAU / 10.0);
    let tip_length = vec.length() * 0.25;
    let tip = origin + vec;
    let dir = vec.normalized();
    out.push(egui::Shape::line_segment([origin, tip], stroke));
    out.push(egui::Shape::line_segment(
        [tip, tip - tip_length * (rot * dir)],
        stroke,
    ));
    out.push(egui::Shape::line_segment(
        [tip, tip - tip_length * (rot.inverse() * dir)],
        stroke,
    ));
}

/// Draws the agents as dots coloured by group with a dark rim: two filled discs each, which
/// egui draws as one textured quad apiece (a stroked circle would be tessellated as a path).
fn draw_agents(painter: &egui::Painter, rect: Rect, view: &ViewTransform, doc: &Document, agents: &Agents) {
    let colours: Vec<Color32> = doc.groups.iter().map(|g| color(g.color)).collect();
    let mut shapes = Vec::with_capacity(2 * agents.len());
    for i in 0..agents.len() {
        let p = view.to_screen(rect, [agents.x[i] as f64, agents.y[i] as f64]);
        let r = (agents.radius[i] * view.scale).max(1.5);
        if !rect.expand(r + AGENT_RIM_POINTS).contains(p) {
            continue;
        }
        let fill = colours
            .get(agents.group[i] as usize)
            .copied()
            .unwrap_or(Color32::BLACK);
        shapes.push(egui::Shape::circle_filled(
            p,
            r + AGENT_RIM_POINTS,
            Color32::BLACK,
        ));
        shapes.push(egui::Shape::circle_filled(p, r, fill));
    }
    painter.extend(shapes);
}
