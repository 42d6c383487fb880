//! tract's executor as the kernels' [`Parallel`]: a scatter splits over the
//! threads the caller installed for tract
//! (`tract_linalg::multithread::set_default_executor`, or
//! `multithread_tract_scope` for one call), never over a pool of ours. With
//! tract's default single-thread executor, or without the `multithread`
//! feature, every task runs in order on the calling thread. The kernels
//! split by destination, so results are bit-identical at any thread count.

use scatter_kernels::Parallel;
use tract_linalg::multithread::{Executor, current_tract_executor};

/// The executor current on this thread, as the kernels' [`Parallel`].
#[derive(Debug, Clone)]
pub struct TractThreads(Executor);

impl TractThreads {
    /// The executor current on the calling thread (tract's
    /// `current_tract_executor`).
    pub fn current() -> TractThreads {
        TractThreads(current_tract_executor())
    }
}

impl Parallel for TractThreads {
    fn threads(&self) -> usize {
        match &self.0 {
            Executor::SingleThread => 1,
            #[cfg(feature = "multithread")]
            Executor::MultiThread(pool) => pool.current_num_threads(),
            #[cfg(feature = "multithread")]
            Executor::RayonGlobal => rayon::current_num_threads(),
        }
    }

    fn for_each(&self, tasks: usize, task: &(dyn Fn(usize) + Sync)) {
        match &self.0 {
            Executor::SingleThread => (0..tasks).for_each(task),
            #[cfg(feature = "multithread")]
            Executor::MultiThread(pool) => pool.scope(|s| spawn_all(s, tasks, task)),
            #[cfg(feature = "multithread")]
            Executor::RayonGlobal => rayon::scope(|s| spawn_all(s, tasks, task)),
        }
    }
}

/// One rayon task per kernel task; the scope returns once all have.
#[cfg(feature = "multithread")]
fn spawn_all<'s>(scope: &rayon::Scope<'s>, tasks: usize, task: &'s (dyn Fn(usize) + Sync)) {
    for i in 0..tasks {
        scope.spawn(move |_| task(i));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;
    use std::sync::Mutex;
    use tract_linalg::multithread::multithread_tract_scope;

    fn names_of_threads_running(tasks: usize) -> (usize, HashSet<String>) {
        let names = Mutex::new(HashSet::new());
        let threads = TractThreads::current();
        threads.for_each(tasks, &|_| {
            // Long enough for the other workers to pick up their tasks.
            std::thread::sleep(std::time::Duration::from_millis(20));
            let name = std::thread::current().name().unwrap_or("").to_string();
            names.lock().unwrap().insert(name);
        });
        (threads.threads(), names.into_inner().unwrap())
    }

    #[test]
    fn the_default_executor_runs_every_task_on_the_calling_thread() {
        let caller = std::thread::current().name().unwrap_or("").to_string();
        let (threads, names) = names_of_threads_running(4);
        assert_eq!(threads, 1);
        assert_eq!(names, HashSet::from([caller]));
    }

    #[cfg(feature = "multithread")]
    #[test]
    fn an_installed_pool_runs_the_tasks_on_its_own_threads() {
        let pool = Executor::multithread_with_name(2, "callers-pool");
        let (threads, names) = multithread_tract_scope(pool, || names_of_threads_running(4));
        assert_eq!(threads, 2);
        assert!(
            names.len() == 2 && names.iter().all(|n| n.starts_with("callers-pool-")),
            "{names:?}"
        );
    }
}
