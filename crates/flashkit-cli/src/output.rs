//! Output files: JSON and CSV, written whole or not at all, never over an input.

use anyhow::{Context, Result, anyhow};
use flashkit_core::same_file;
use flashkit_report::Table;
use serde::Serialize;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

/// The files this process reads as input (traces, configuration, records, results), so
/// that no output replaces one: an output is created empty before it is written, and a
/// `--csv` or `-o` that names the trace would otherwise lose it.
static INPUTS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Remember `path` as an input of this run (see [`check_output`]).
pub fn note_input(path: &Path) {
    let mut inputs = INPUTS.lock().unwrap_or_else(PoisonError::into_inner);
    if !inputs.iter().any(|input| input == path) {
        inputs.push(path.to_path_buf());
    }
}

/// Refuse an output path that is one of the run's inputs (the same path, or a link to
/// it). Commands call it before their work, so that the mistake costs nothing, and every
/// writer here calls it again before it creates the file.
pub fn check_output(path: &Path) -> Result<()> {
    // `-` means standard input to `--trace`; as an output it made a file named `-`.
    if path.as_os_str() == "-" {
        return Err(anyhow!(
            "- is not standard output here: outputs are files (the tables already go to \
             standard output); give a path, or ./- for a file named -"
        ));
    }
    // Found when the file was written otherwise, after the run: a long compare lost its
    // results to a typo in the directory.
    if path.is_dir() {
        return Err(anyhow!(
            "{} is a directory: give a file's path",
            path.display()
        ));
    }
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !dir.is_dir() {
        return Err(anyhow!(
            "cannot write {}: the directory {} does not exist",
            path.display(),
            dir.display()
        ));
    }
    let inputs = INPUTS.lock().unwrap_or_else(PoisonError::into_inner);
    match inputs.iter().find(|input| same_file(input, path)) {
        Some(input) if input.as_path() == path => Err(anyhow!(
            "{} is an input of this run: writing it would replace it; give the output another path",
            path.display()
        )),
        Some(input) => Err(anyhow!(
            "{} is the input {} (a link or another spelling of its path): writing it would \
             replace it; give the output another path",
            path.display(),
            input.display()
        )),
        None => Ok(()),
    }
}

/// [`check_output`] for each output given, by flag, and no two of them one file (the second
/// written would replace the first: `--json r.json --csv r.json` kept only the CSV).
pub fn check_outputs(outputs: &[(&str, Option<&Path>)]) -> Result<()> {
    let given: Vec<(&str, &Path)> = outputs
        .iter()
        .filter_map(|&(flag, path)| Some((flag, path?)))
        .collect();
    for (i, &(flag, path)) in given.iter().enumerate() {
        check_output(path)?;
        if let Some(&(other, _)) = given[..i].iter().find(|&&(_, p)| same_output(p, path)) {
            return Err(anyhow!(
                "{other} and {flag} both name {}: the second would replace the first; give \
                 each its own path",
                path.display()
            ));
        }
    }
    Ok(())
}

/// Whether two output paths name one file, whether or not it exists yet (a device such as
/// `/dev/null` or `/dev/stdout` may take several outputs).
pub fn same_output(a: &Path, b: &Path) -> bool {
    let device = |p: &Path| std::fs::metadata(p).is_ok_and(|m| !m.file_type().is_file());
    if device(a) || device(b) {
        return false;
    }
    if a == b || same_file(a, b) {
        return true;
    }
    // Not there yet: the same name in the same directory, however it is spelt.
    let place = |p: &Path| -> Option<(PathBuf, std::ffi::OsString)> {
        let parent = match p.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent,
            _ => Path::new("."),
        };
        Some((
            std::fs::canonicalize(parent).ok()?,
            p.file_name()?.to_owned(),
        ))
    };
    matches!((place(a), place(b)), (Some(x), Some(y)) if x == y)
}

/// An output written under a temporary name beside it and renamed over it by
/// [`Staged::commit`], so that the path holds either what it held before or the whole new
/// output: never a part of one left by an error, a failed check or Ctrl-C (a CSV trace cut
/// short would still parse). Dropped without a commit, the temporary file is removed; it is
/// also on [`crate::interrupt`]'s list while it lives.
///
/// A path that exists and is not a regular file (`/dev/stdout`, a FIFO) is written in place:
/// renaming over it would replace the device, not write to it. A symbolic link is followed,
/// so the file it names is replaced and the link kept.
pub struct Staged {
    /// Where the output is written until the commit.
    temporary: PathBuf,
    /// The output's path as given (for messages) and the file the commit replaces.
    target: PathBuf,
    real_target: PathBuf,
    in_place: bool,
    committed: bool,
    _guard: Option<crate::interrupt::Temporary>,
}

impl Staged {
    /// Stage an output at `path`, unless it is an input of the run.
    pub fn new(path: &Path) -> Result<Staged> {
        check_output(path)?;
        let metadata = std::fs::metadata(path).ok();
        let in_place = metadata.as_ref().is_some_and(|m| !m.file_type().is_file());
        // A rename would replace a file its owner made read-only, which writing in place
        // would not.
        if metadata
            .as_ref()
            .is_some_and(|m| m.file_type().is_file() && m.permissions().readonly())
        {
            return Err(anyhow!(
                "cannot write {}: the file is read-only",
                path.display()
            ));
        }
        let real_target = match std::fs::symlink_metadata(path) {
            Ok(m) if m.file_type().is_symlink() && !in_place => std::fs::canonicalize(path)
                .with_context(|| format!("cannot follow the link {}", path.display()))?,
            _ => path.to_path_buf(),
        };
        if in_place {
            return Ok(Staged {
                temporary: path.to_path_buf(),
                target: path.to_path_buf(),
                real_target,
                in_place,
                committed: false,
                _guard: None,
            });
        }
        static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = real_target
            .file_name()
            .with_context(|| format!("{} does not name a file", path.display()))?;
        let mut temporary_name = std::ffi::OsString::from(".");
        temporary_name.push(name);
        temporary_name.push(format!(".flashkit-{}-{n}.tmp", std::process::id()));
        let temporary = real_target.with_file_name(temporary_name);
        let guard = crate::interrupt::temporary(&temporary);
        Ok(Staged {
            temporary,
            target: path.to_path_buf(),
            real_target,
            in_place,
            committed: false,
            _guard: Some(guard),
        })
    }

    /// The path to write the output to (the temporary file, or the output itself when it
    /// is written in place).
    pub fn path(&self) -> &Path {
        &self.temporary
    }

    /// Create the file to write (see [`Staged::path`]).
    pub fn create(&self) -> Result<File> {
        if !self.in_place {
            check_output(&self.target)?;
        }
        File::create(&self.temporary)
            .with_context(|| format!("cannot create {}", self.target.display()))
    }

    /// Put the whole output in place.
    pub fn commit(mut self) -> Result<()> {
        if !self.in_place {
            // Checked again: an input may have been noted since the output was staged.
            check_output(&self.target)?;
            // The file it replaces keeps its mode (a private 0600 report stays private).
            if let Ok(existing) = std::fs::metadata(&self.real_target) {
                std::fs::set_permissions(&self.temporary, existing.permissions())
                    .with_context(|| format!("cannot write {}", self.target.display()))?;
            }
            std::fs::rename(&self.temporary, &self.real_target)
                .with_context(|| format!("cannot write {}", self.target.display()))?;
        }
        self.committed = true;
        Ok(())
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.committed && !self.in_place {
            let _ = std::fs::remove_file(&self.temporary);
        }
    }
}

/// What a command that writes several outputs into a directory (a sweep, report's figures)
/// created, removed again when it fails before it has anything worth keeping (a full disk at
/// the first file left an empty directory, a 0-byte `cells.json.tmp`, an empty
/// `results.jsonl`). Only what did not exist before is removed, newest first, and a
/// directory only if nothing else is in it; [`Undo::keep`] (on success, or once a sweep has
/// recorded a result) keeps everything.
#[derive(Default)]
pub struct Undo {
    created: Vec<PathBuf>,
    kept: bool,
}

impl Undo {
    /// Note `path`, which the command may create: removed on failure if it is not there now.
    pub fn note(&mut self, path: &Path) {
        if std::fs::symlink_metadata(path).is_err() {
            self.created.push(path.to_path_buf());
        }
    }

    /// `create_dir_all`, noting each directory it creates.
    pub fn create_dir_all(&mut self, dir: &Path) -> Result<()> {
        let missing: Vec<&Path> = dir
            .ancestors()
            .take_while(|d| !d.as_os_str().is_empty() && std::fs::symlink_metadata(d).is_err())
            .collect();
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        self.created
            .extend(missing.into_iter().rev().map(Path::to_path_buf));
        Ok(())
    }

    /// Keep everything created.
    pub fn keep(&mut self) {
        self.kept = true;
    }
}

impl Drop for Undo {
    fn drop(&mut self) {
        if self.kept {
            return;
        }
        for path in self.created.iter().rev() {
            let _ = match std::fs::symlink_metadata(path) {
                Ok(m) if m.is_dir() => std::fs::remove_dir(path),
                Ok(_) => std::fs::remove_file(path),
                Err(_) => continue,
            };
        }
    }
}

/// An output file being written: buffered, staged ([`Staged`]), in place on [`Output::finish`].
pub struct Output {
    out: BufWriter<File>,
    staged: Staged,
}

impl Output {
    /// Flush and put the output in place.
    pub fn finish(mut self) -> Result<()> {
        use std::io::Write;
        self.out
            .flush()
            .with_context(|| format!("writing {}", self.staged.target.display()))?;
        self.staged.commit()
    }
}

impl std::io::Write for Output {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.out.write(buf)
    }
    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.out.write_all(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// Start an output file, unless it is an input; it appears at `path` on [`Output::finish`].
pub fn create(path: &Path) -> Result<Output> {
    let staged = Staged::new(path)?;
    let file = staged.create()?;
    Ok(Output {
        out: BufWriter::with_capacity(1 << 20, file),
        staged,
    })
}

/// Write a whole output file, unless it is an input.
pub fn write_file(path: &Path, contents: impl AsRef<[u8]>) -> Result<()> {
    use std::io::Write;
    let mut out = create(path)?;
    out.write_all(contents.as_ref())
        .with_context(|| format!("cannot write {}", path.display()))?;
    out.finish()
}

pub fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<()> {
    use std::io::Write;
    let mut out = create(path)?;
    serde_json::to_writer_pretty(&mut out, value)
        .with_context(|| format!("writing {}", path.display()))?;
    out.write_all(b"\n")
        .with_context(|| format!("writing {}", path.display()))?;
    out.finish()
}

pub fn write_csv(path: &Path, table: &Table) -> Result<()> {
    let mut out = create(path)?;
    table
        .write_csv(&mut out)
        .with_context(|| format!("writing {}", path.display()))?;
    out.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .expect("read dir")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn an_output_appears_whole_at_finish_and_not_at_all_without_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("out.json");
        std::fs::write(&path, b"old").expect("write");
        let mut out = create(&path).expect("create");
        out.write_all(b"new, ").expect("write");
        assert_eq!(
            std::fs::read(&path).expect("read"),
            b"old",
            "not yet in place"
        );
        out.write_all(b"whole").expect("write");
        out.finish().expect("finish");
        assert_eq!(std::fs::read(&path).expect("read"), b"new, whole");

        let mut out = create(&path).expect("create");
        out.write_all(b"abandoned").expect("write");
        drop(out);
        assert_eq!(std::fs::read(&path).expect("read"), b"new, whole");
        assert_eq!(names(dir.path()), ["out.json"], "no temporary file is left");
    }

    #[cfg(unix)]
    #[test]
    fn a_link_is_written_through_and_a_device_in_place() {
        let dir = tempfile::tempdir().expect("tempdir");
        let target = dir.path().join("target.csv");
        let link = dir.path().join("link.csv");
        std::fs::write(&target, b"old").expect("write");
        std::os::unix::fs::symlink(&target, &link).expect("symlink");
        write_file(&link, b"new").expect("write through the link");
        assert!(
            std::fs::symlink_metadata(&link)
                .expect("link")
                .file_type()
                .is_symlink(),
            "the link stays a link"
        );
        assert_eq!(std::fs::read(&target).expect("read"), b"new");
        assert_eq!(names(dir.path()), ["link.csv", "target.csv"]);

        // A replaced file keeps its mode.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let private = dir.path().join("private.json");
            std::fs::write(&private, b"old").expect("write");
            std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o600))
                .expect("chmod");
            write_file(&private, b"new").expect("write");
            let mode = std::fs::metadata(&private)
                .expect("metadata")
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
            assert_eq!(std::fs::read(&private).expect("read"), b"new");
        }

        // A read-only file is not replaced.
        let locked = dir.path().join("locked.csv");
        std::fs::write(&locked, b"keep").expect("write");
        let mut permissions = std::fs::metadata(&locked).expect("metadata").permissions();
        permissions.set_readonly(true);
        std::fs::set_permissions(&locked, permissions).expect("chmod");
        let error = write_file(&locked, b"new").expect_err("read-only");
        assert!(error.to_string().contains("read-only"), "{error}");
        assert_eq!(std::fs::read(&locked).expect("read"), b"keep");

        // Renaming over /dev/null would replace the device; it is written in place.
        write_file(Path::new("/dev/null"), b"discarded").expect("write /dev/null");
        let null = std::fs::metadata("/dev/null").expect("/dev/null");
        assert!(!null.file_type().is_file(), "/dev/null is still a device");
    }
}
