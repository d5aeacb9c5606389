//! Ctrl-C (SIGINT, and SIGTERM): remove the temporary files a run made, then exit 130.
//!
//! The external sort keeps its runs in a scratch file as large as twice its input, the disk
//! probe fills a file of a gigabyte, and `reproduce flashmodel` sorts in a temporary
//! directory; each is removed when its run returns, but an interrupted process returns
//! nothing, and a user who stops a long sort would find gigabytes left in the output's
//! directory. Outputs being written are on the list too ([`crate::output::Staged`]): they
//! are written under a temporary name and renamed into place when whole.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

/// Files and directories to remove if the process is interrupted.
static TEMPORARY: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Install the handler (once, at start-up). A failure to install it (a handler already
/// set by an embedding program) leaves the default behaviour, so it is not an error.
pub fn install() {
    let _ = ctrlc::set_handler(|| {
        let removed = remove_all();
        if removed > 0 {
            eprintln!("\ninterrupted: removed {removed} temporary file(s)");
        } else {
            eprintln!("\ninterrupted");
        }
        std::process::exit(130);
    });
}

/// When the reader of standard output goes away (`flashkit compare | head -3`), `println!`
/// panics ("failed printing to stdout: Broken pipe"), which printed a panic message and a
/// backtrace after the lines `head` kept. Stop instead as a program killed by SIGPIPE would:
/// quietly, with exit status 141 (128 + 13), after removing the temporary files, as Ctrl-C
/// does. Any other failure to print (`> /dev/full`: no space left) is an error like any
/// other output's, exit 1, not a panic with exit 101. Any other panic goes to the default
/// hook.
pub fn stop_quietly_on_broken_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info.payload_as_str().unwrap_or_default();
        if is_broken_pipe_print(message) {
            remove_all();
            std::process::exit(141);
        }
        if let Some(error) = message.strip_prefix("failed printing to stdout: ") {
            remove_all();
            // Standard error may still work; if it does not, the status says it all.
            let _ = writeln!(
                std::io::stderr(),
                "error: cannot write to standard output: {error}"
            );
            std::process::exit(1);
        }
        if message.starts_with("failed printing to stderr") {
            remove_all();
            std::process::exit(1);
        }
        default(info);
    }));
}

/// Whether `message` is std's panic on a print to a closed pipe.
fn is_broken_pipe_print(message: &str) -> bool {
    // std panics with "failed printing to stdout: {io error}"; the error of a closed pipe
    // displays as EPIPE's text, "Broken pipe (os error 32)" on Linux.
    let epipe = std::io::Error::from_raw_os_error(libc::EPIPE).to_string();
    (message.starts_with("failed printing to stdout")
        || message.starts_with("failed printing to stderr"))
        && message.ends_with(&epipe)
}

/// Remove `path` (a file, or a directory and everything in it) if the process is
/// interrupted before [`Temporary`] is dropped.
#[must_use = "the path is forgotten when the guard is dropped"]
pub fn temporary(path: &Path) -> Temporary {
    TEMPORARY
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(path.to_path_buf());
    Temporary(path.to_path_buf())
}

/// Keeps a path on the list of [`temporary`] ones while it lives; dropping it takes the
/// path off (whoever made the file removes it on a normal return).
pub struct Temporary(PathBuf);

impl Drop for Temporary {
    fn drop(&mut self) {
        let mut list = TEMPORARY.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(i) = list.iter().rposition(|p| *p == self.0) {
            list.swap_remove(i);
        }
    }
}

/// The lab's [`Temporaries`](flashkit_lab::temporaries::Temporaries) on this process's
/// list: what an experiment holds is removed on Ctrl-C as [`temporary`] paths are.
#[derive(Clone, Copy, Debug, Default)]
pub struct OnInterrupt;

impl flashkit_lab::temporaries::Temporaries for OnInterrupt {
    fn hold(&self, path: &Path) -> flashkit_lab::temporaries::Held {
        Box::new(temporary(path))
    }
}

/// Remove every listed path that exists; how many were removed.
fn remove_all() -> usize {
    let list = TEMPORARY.lock().unwrap_or_else(PoisonError::into_inner);
    list.iter()
        .filter(|path| {
            let removed = if path.is_dir() {
                std::fs::remove_dir_all(path)
            } else {
                std::fs::remove_file(path)
            };
            removed.is_ok()
        })
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listed_paths_are_removed_until_their_guard_drops() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("scratch.tmp");
        let tree = dir.path().join("work");
        std::fs::write(&file, b"runs").expect("write");
        std::fs::create_dir_all(tree.join("deep")).expect("mkdir");
        std::fs::write(tree.join("deep").join("x"), b"x").expect("write");
        let kept = dir.path().join("kept.tmp");
        std::fs::write(&kept, b"kept").expect("write");
        {
            let _dropped = temporary(&kept);
        }
        let _file = temporary(&file);
        let _tree = temporary(&tree);
        let _missing = temporary(&dir.path().join("never-made"));
        // What an experiment in the lab holds is on the same list, and off it once the lab
        // drops its guard. (One test: the list is the process's, shared by parallel tests.)
        use flashkit_lab::temporaries::Temporaries;
        let held = dir.path().join("held");
        std::fs::create_dir_all(held.join("deep")).expect("mkdir");
        let released = dir.path().join("released");
        std::fs::write(&released, b"x").expect("write");
        drop(OnInterrupt.hold(&released));
        let _held = OnInterrupt.hold(&held);
        assert_eq!(remove_all(), 3);
        assert!(!file.exists() && !tree.exists() && !held.exists());
        assert!(kept.exists(), "a path whose guard dropped is not removed");
        assert!(released.exists(), "a path the lab released is not removed");
    }

    #[test]
    fn only_a_print_to_a_closed_pipe_is_a_broken_pipe() {
        let epipe = std::io::Error::from_raw_os_error(libc::EPIPE);
        assert!(is_broken_pipe_print(&format!(
            "failed printing to stdout: {epipe}"
        )));
        assert!(is_broken_pipe_print(&format!(
            "failed printing to stderr: {epipe}"
        )));
        let full = std::io::Error::from_raw_os_error(libc::ENOSPC);
        assert!(!is_broken_pipe_print(&format!(
            "failed printing to stdout: {full}"
        )));
        assert!(!is_broken_pipe_print("index out of bounds"));
    }
}
