//! Temporary files an experiment makes on a real disk (the disk probe's file, the real-disk
//! sort's directory), announced to the front end so that it can remove them if the process
//! is interrupted.
//!
//! The experiment removes its temporaries itself when it returns, but an interrupted process
//! returns nothing; only the front end knows how it is stopped (the `flashkit` binary's
//! Ctrl-C handler). The lab holds no process-wide list: the caller passes a
//! [`Temporaries`], and each path stays the front end's to remove while the guard
//! [`Temporaries::hold`] returns lives.

use std::path::Path;

/// A guard from [`Temporaries::hold`]: dropping it takes the path off the front end's list.
pub type Held = Box<dyn Send>;

/// Where an experiment announces the temporary files and directories it makes.
pub trait Temporaries: Sync {
    /// `path` (a file, or a directory and everything in it) is a temporary until the
    /// returned guard drops: remove it if the process is interrupted before then.
    fn hold(&self, path: &Path) -> Held;
}

/// Temporaries nobody removes on an interrupt (a test, or a front end without signals).
#[derive(Clone, Copy, Debug, Default)]
pub struct Unwatched;

impl Temporaries for Unwatched {
    fn hold(&self, _path: &Path) -> Held {
        Box::new(())
    }
}
