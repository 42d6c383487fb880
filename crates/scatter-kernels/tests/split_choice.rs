//! Which ScatterND work `Schedule::DEFAULT` splits over threads: whole
//! rows (grouped by destination row), and slices of at least
//! `nd_split_from_slice_bytes`; never element scatters sorted per call,
//! whose split (a sort by block) ran up to 1.7× *slower* than one thread
//! (see the field's doc), though a copying one's copy is split; but
//! element scatters whose indices came back, sorted once for the split
//! (`SortedNdIndices::sorted_for_split`), even into data a copy of which
//! alone would not be split.

use std::sync::atomic::{AtomicUsize, Ordering};

use scatter_kernels::{BlockSort, CopyOf, Execution, NdPlan, Parallel, Reduction, Serial};

/// Two threads claimed; counts the tasks it was handed and runs them in
/// order on the caller's thread.
#[derive(Default)]
struct CountingTwoThreads(AtomicUsize);

impl Parallel for CountingTwoThreads {
    fn threads(&self) -> usize {
        2
    }

    fn for_each(&self, tasks: usize, task: &(dyn Fn(usize) + Sync)) {
        self.0.fetch_add(tasks, Ordering::Relaxed);
        (0..tasks).for_each(task)
    }
}

/// Tasks handed out by an in-place and a copying ScatterND of `rows`
/// distinct rows of `row_len` f32 into `[data_rows, row_len]`.
fn tasks_of(data_rows: usize, row_len: usize, rows: usize) -> (usize, usize) {
    let plan = NdPlan::new(&[data_rows, row_len], &[rows, 1], &[rows, row_len]).unwrap();
    let indices: Vec<i64> = (0..rows as i64)
        .map(|r| (r * 7) % data_rows as i64)
        .collect();
    let token = plan
        .check_indices(&indices, Execution::SERIAL, BlockSort::Off)
        .unwrap();
    let updates = vec![1f32; rows * row_len];
    let par = CountingTwoThreads::default();
    let mut data = vec![0f32; data_rows * row_len];
    token
        .apply(&mut data, &updates, Reduction::Add, Execution::on(&par))
        .unwrap();
    let in_place = par.0.swap(0, Ordering::Relaxed);
    let mut dst = vec![std::mem::MaybeUninit::new(0f32); data.len()];
    token
        .apply(
            CopyOf {
                data: &data,
                out: &mut dst,
            },
            &updates,
            Reduction::None,
            Execution::on(&par),
        )
        .unwrap();
    (in_place, par.0.load(Ordering::Relaxed))
}

#[test]
fn element_scatters_run_on_one_thread_whatever_the_host_offers_and_only_their_copy_is_split() {
    // 1 << 18 single elements (3 MiB of indices and updates) into 4 MiB:
    // in place, no task; copying, the copy's two (the scatter serial).
    assert_eq!(tasks_of(1 << 20, 1, 1 << 18), (0, 2));
}

#[test]
fn gnn_sized_rows_are_split_by_destination_row() {
    // 64-feature f32 rows (256 B): message passing into 8192 nodes (2 MiB),
    // grouped by destination row (a counting sort) and split by rows.
    let (in_place, copying) = tasks_of(8192, 64, 16384);
    assert!(in_place >= 2, "in place: {in_place} tasks");
    assert!(copying >= 2, "copying: {copying} tasks");
}

#[test]
fn rows_of_a_page_and_more_are_split() {
    // 16 KiB rows, 64 of 128 written: 4 MiB of updates.
    let (in_place, copying) = tasks_of(128, 4096, 64);
    assert!(in_place >= 2, "in place: {in_place} tasks");
    assert!(copying >= 2, "copying: {copying} tasks");
}

#[test]
fn element_scatters_sorted_once_for_a_split_run_on_both_threads_in_place_and_copying() {
    // 1 << 17 single elements (1.5 MiB of indices and updates) into 16 KiB.
    let plan = NdPlan::new(&[4096], &[1 << 17, 1], &[1 << 17]).unwrap();
    let indices: Vec<i64> = (0..1i64 << 17).map(|i| (i * 7919) % 4096).collect();
    let par = CountingTwoThreads::default();
    let split = plan
        .check_indices(
            &indices,
            Execution::on(&Serial),
            BlockSort::ForElementBytes(4),
        )
        .unwrap()
        .sorted_for_split(4, Execution::on(&par))
        .expect("sorted for two threads");
    let updates = vec![1f32; 1 << 17];
    let mut data = vec![0f32; 4096];
    split
        .apply(&mut data, &updates, Reduction::Add, Execution::on(&par))
        .unwrap();
    assert_eq!(par.0.swap(0, Ordering::Relaxed), 2, "in place");
    let mut dst = vec![std::mem::MaybeUninit::new(0f32); data.len()];
    split
        .apply(
            CopyOf {
                data: &data,
                out: &mut dst,
            },
            &updates,
            Reduction::Add,
            Execution::on(&par),
        )
        .unwrap();
    // The tasks' work is the updates they apply as well as the copy.
    assert_eq!(par.0.load(Ordering::Relaxed), 2, "copying");
}
