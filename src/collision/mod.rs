//! Walls and overlaps: the one implementation of moving a walker against blocked cells
//! ([`walls`]) and of stepping a body out of the bodies it overlaps ([`overlap`]), used by the
//! simulation's walk and separation (`sim`) and by the local layer's move and contact passes
//! (`local`) alike. It reads the scene's obstacle mask and knows neither of its users.
//!
//! The two users keep different settings of the same code, each where its results rest on them:
//! - where a centre may stand: `sim` asks the scene ([`walls::passable`], an `f64` quotient
//!   for a point's cell, the rule every position of a run is judged by), `local` asks a
//!   [`WallMap`] (an `f32` product, which its GPU twin computes alike, and no step cut
//!   diagonally between two blocked cells);
//! - a walker's body: `sim`'s pedestrian model keeps the body's rim out of obstacle cells
//!   ([`walls::slide_body`] with the walker's radius; radius 0, the published model, moves the
//!   centre), `local` moves centres in sub-steps of half a cell ([`WallMap::move_agent`]);
//!   both keep every body out of openings narrower than itself by one rule, the free floor
//!   across a cell ([`walls::FreeRuns`]) against the body's width ([`walls::body_cells`]);
//! - a push's gap and how its direction is normalised ([`overlap::PushRule`]).

pub mod overlap;
pub mod segments;
pub mod walls;

pub use segments::WallSegments;
pub use walls::WallMap;
