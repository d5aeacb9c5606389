//! The parallel executor: a plan's jobs on a fixed number of worker threads.
//!
//! Contracts:
//! - **Plan order.** Results come back in the order of the jobs given, whatever order they
//!   started or finished in; a job's result depends on the job alone (each is seeded on its
//!   own), so a plan gives the same results bit for bit on one thread or many.
//! - **Isolation.** A job that panics (a flashkit bug) fails alone: its slot holds a
//!   [`JobPanic`] with the panic's message, and every other job still runs.
//! - **Progress.** `done` is called on the calling thread as each job finishes, with the
//!   worker that ran it, so a caller can draw progress or record results as they come
//!   (a sweep appends each to its results file).
//! - **No idle threads.** At most one worker a job, and at least one.

use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Mutex, PoisonError, mpsc};

/// A job that panicked: a bug in flashkit, isolated to its job.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("panicked (a flashkit bug): {message}")]
pub struct JobPanic {
    /// The panic's message.
    pub message: String,
}

impl JobPanic {
    fn from_payload(payload: Box<dyn std::any::Any + Send>) -> JobPanic {
        let message = payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "a panic with no message".into());
        JobPanic { message }
    }
}

/// One job's end, as `done` sees it.
#[derive(Debug)]
pub struct Finished<'a, R> {
    /// The worker (0-based) that ran it.
    pub worker: usize,
    /// The job's place in the plan.
    pub index: usize,
    /// What it returned, or its panic.
    pub result: &'a Result<R, JobPanic>,
}

/// Runs plans on a fixed number of worker threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Executor {
    workers: usize,
}

impl Executor {
    /// An executor of `workers` threads (at least one).
    pub fn new(workers: usize) -> Executor {
        Executor {
            workers: workers.max(1),
        }
    }

    /// One worker a core this process may use (one when the system cannot tell).
    pub fn per_core() -> Executor {
        Executor::new(cores())
    }

    /// Workers it runs on.
    pub fn workers(&self) -> usize {
        self.workers
    }

    /// Workers a plan of `jobs` jobs runs on: no more than there are jobs, at least one.
    pub fn workers_for(&self, jobs: usize) -> usize {
        self.workers.min(jobs).max(1)
    }

    /// `run(worker, job)` for every job, started in plan order.
    pub fn run<J: Send, R: Send>(
        &self,
        jobs: Vec<J>,
        run: impl Fn(usize, J) -> R + Sync,
        done: impl FnMut(Finished<'_, R>),
    ) -> Vec<Result<R, JobPanic>> {
        let order: Vec<usize> = (0..jobs.len()).collect();
        self.run_in_order(jobs, &order, run, done)
    }

    /// [`Executor::run`], starting the jobs in the order of `key` (ascending, ties in plan
    /// order): long jobs started first do not run alone at the end. Results still come
    /// back in plan order.
    pub fn run_by_key<J: Send, R: Send, K: Ord>(
        &self,
        jobs: Vec<J>,
        key: impl Fn(&J) -> K,
        run: impl Fn(usize, J) -> R + Sync,
        done: impl FnMut(Finished<'_, R>),
    ) -> Vec<Result<R, JobPanic>> {
        let mut order: Vec<usize> = (0..jobs.len()).collect();
        order.sort_by_key(|&i| key(&jobs[i]));
        self.run_in_order(jobs, &order, run, done)
    }

    fn run_in_order<J: Send, R: Send>(
        &self,
        jobs: Vec<J>,
        order: &[usize],
        run: impl Fn(usize, J) -> R + Sync,
        mut done: impl FnMut(Finished<'_, R>),
    ) -> Vec<Result<R, JobPanic>> {
        let total = jobs.len();
        if total == 0 {
            return Vec::new();
        }
        let mut slots: Vec<Option<J>> = jobs.into_iter().map(Some).collect();
        let queue: VecDeque<(usize, J)> = order
            .iter()
            .map(|&i| {
                (
                    i,
                    slots[i]
                        .take()
                        .expect("invariant: the order is a permutation"),
                )
            })
            .collect();
        let queue = Mutex::new(queue);
        let (sender, receiver) = mpsc::channel();
        let mut results: Vec<Option<Result<R, JobPanic>>> = (0..total).map(|_| None).collect();
        std::thread::scope(|scope| {
            for worker in 0..self.workers_for(total) {
                let (sender, queue, run) = (sender.clone(), &queue, &run);
                scope.spawn(move || {
                    loop {
                        let next = queue
                            .lock()
                            .unwrap_or_else(PoisonError::into_inner)
                            .pop_front();
                        let Some((index, job)) = next else { break };
                        let result = catch_unwind(AssertUnwindSafe(|| run(worker, job)))
                            .map_err(JobPanic::from_payload);
                        if sender.send((worker, index, result)).is_err() {
                            break;
                        }
                    }
                });
            }
            drop(sender);
            for (worker, index, result) in receiver {
                done(Finished {
                    worker,
                    index,
                    result: &result,
                });
                results[index] = Some(result);
            }
        });
        results
            .into_iter()
            .map(|r| r.expect("invariant: every job sends its result (panics are caught)"))
            .collect()
    }
}

/// The cores this process may use (1 when the system cannot tell).
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cores are what the system says it offers this process, and at least one.
    #[test]
    fn cores_are_the_systems_count() {
        let expected = std::thread::available_parallelism().map_or(1, |n| n.get());
        assert_eq!(cores(), expected);
        assert!(cores() >= 1);
    }
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn results_come_back_in_plan_order_on_any_number_of_workers() {
        let jobs: Vec<u64> = (0..200).collect();
        let square = |_, j: u64| {
            // Later jobs finish first: the order of finishing is not the plan's.
            std::thread::sleep(std::time::Duration::from_micros(200 - j));
            j * j
        };
        let expected: Vec<Result<u64, JobPanic>> = (0..200).map(|j| Ok(j * j)).collect();
        for workers in [1, 2, 3, 8] {
            let mut finished = Vec::new();
            let results = Executor::new(workers).run(jobs.clone(), square, |f| {
                assert!(f.worker < workers);
                assert_eq!(f.result, &Ok(jobs[f.index] * jobs[f.index]));
                finished.push(f.index);
            });
            assert_eq!(results, expected, "{workers} workers");
            finished.sort_unstable();
            assert_eq!(finished, (0..200).collect::<Vec<_>>(), "done once a job");
        }
    }

    #[test]
    fn a_panicking_job_fails_alone() {
        let ran = AtomicUsize::new(0);
        let results = Executor::new(2).run(
            vec![1, 2, 3, 4, 5],
            |_, j: i32| {
                ran.fetch_add(1, Ordering::Relaxed);
                if j == 2 {
                    panic!("job {j} broke");
                }
                if j == 4 {
                    std::panic::panic_any(7u8);
                }
                j * 10
            },
            |_| {},
        );
        assert_eq!(ran.load(Ordering::Relaxed), 5, "every job ran");
        assert_eq!(results[0], Ok(10));
        assert_eq!(
            results[1],
            Err(JobPanic {
                message: "job 2 broke".into()
            })
        );
        assert_eq!(results[2], Ok(30));
        assert_eq!(
            results[3].as_ref().map_err(|p| p.message.as_str()),
            Err("a panic with no message")
        );
        assert_eq!(results[4], Ok(50));
        let shown = results[1].clone().err().map(|p| p.to_string());
        assert_eq!(
            shown.as_deref(),
            Some("panicked (a flashkit bug): job 2 broke")
        );
    }

    #[test]
    fn jobs_start_in_key_order_and_return_in_plan_order() {
        let started = Mutex::new(Vec::new());
        let results = Executor::new(1).run_by_key(
            vec!["c", "a", "b", "a2"],
            |j| j.chars().next(),
            |_, j| {
                started.lock().expect("lock").push(j);
                j.len()
            },
            |_| {},
        );
        assert_eq!(
            started.into_inner().expect("lock"),
            ["a", "a2", "b", "c"],
            "by key, ties in plan order"
        );
        assert_eq!(results, [Ok(1), Ok(1), Ok(1), Ok(2)]);
    }

    #[test]
    fn workers_are_bounded_by_the_jobs() {
        assert_eq!(Executor::new(0).workers(), 1);
        assert_eq!(Executor::new(8).workers_for(3), 3);
        assert_eq!(Executor::new(8).workers_for(0), 1);
        assert_eq!(Executor::new(2).workers_for(5), 2);
        let used = Mutex::new(std::collections::BTreeSet::new());
        Executor::new(8).run(
            vec![(); 3],
            |worker, ()| {
                used.lock().expect("lock").insert(worker);
                std::thread::sleep(std::time::Duration::from_millis(20));
            },
            |_| {},
        );
        assert!(used.into_inner().expect("lock").iter().all(|&w| w < 3));
        let none: Vec<Result<(), JobPanic>> =
            Executor::new(4).run(Vec::<()>::new(), |_, ()| (), |_| {});
        assert!(none.is_empty());
    }
}
