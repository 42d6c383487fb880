//! Rough timings of the serial, blocked and parallel kernels on the
//! benchmark's random-index rows, for direction only (not a benchmark:
//! no isolation, the median of a few runs; `cargo xtask bench` measures).
//!
//! `cargo run --release -p scatter-kernels --example par_timings [threads [inline]]`

use std::mem::MaybeUninit;
use std::time::Instant;

use scatter_kernels::{
    BlockSort, CopyOf, ElementsPlan, Execution, NdPlan, Parallel, Reduction, Schedule, Serial,
    write_copy_par,
};

/// Each task on a scoped thread (a pool would hand off faster); with
/// `inline`, every task on the calling thread, in order (the split's cost
/// without the threads).
struct Threads(usize, bool);

impl Parallel for Threads {
    fn threads(&self) -> usize {
        self.0
    }

    fn for_each(&self, tasks: usize, task: &(dyn Fn(usize) + Sync)) {
        if self.1 {
            return (0..tasks).for_each(task);
        }
        std::thread::scope(|s| {
            for i in 1..tasks {
                s.spawn(move || task(i));
            }
            if tasks > 0 {
                task(0);
            }
        });
    }
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// Median of `runs` timings of `f` (ms), after one warm-up.
fn time(runs: usize, mut f: impl FnMut()) -> f64 {
    f();
    let mut t: Vec<f64> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[runs / 2]
}

fn main() {
    let threads: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(2);
    let inline = std::env::args().nth(2).is_some_and(|a| a == "inline");
    let par = Threads(threads, inline);
    let mut rng = Rng(3);
    let serial_only = Schedule {
        blocked_from_bytes: usize::MAX,
        ..Schedule::DEFAULT
    };

    // se_max_dense_axis0: [2048, 2048] f32, axis 0, max, random indices.
    let n = 2048usize;
    let data: Vec<f32> = (0..n * n).map(|_| (rng.next() % 1000) as f32).collect();
    let indices: Vec<i64> = (0..n * n).map(|_| (rng.next() % n as u64) as i64).collect();
    let updates: Vec<f32> = (0..n * n).map(|_| (rng.next() % 1000) as f32).collect();
    let plan = ElementsPlan::new(&[n, n], &[n, n], &[n, n], 0).unwrap();
    let mut out = data.clone();
    let check = time(9, || {
        std::hint::black_box(plan.check_indices(&indices, Execution::SERIAL).unwrap());
    });
    let token = plan.check_indices(&indices, Execution::SERIAL).unwrap();
    let row = |name: &str, ms: f64| println!("{name:<58} {ms:8.2} ms");
    println!("rough timings, {threads} threads where parallel (median of 9, noisy machine)");
    row("se_max_dense_axis0 check_indices", check);
    row(
        "se_max_dense_axis0 apply, serial (today)",
        time(9, || {
            token
                .apply(&mut out, &updates, Reduction::Max, Execution::SERIAL)
                .unwrap();
        }),
    );
    row(
        "se_max_dense_axis0 apply on 1 thread, bands",
        time(9, || {
            token
                .apply(&mut out, &updates, Reduction::Max, Execution::on(&Serial))
                .unwrap();
        }),
    );
    for kib in [64usize, 128, 512, 1024] {
        let schedule = Schedule {
            block_bytes: kib << 10,
            ..Schedule::DEFAULT
        };
        row(
            &format!("se_max_dense_axis0 1 thread, bands of {kib} KiB"),
            time(9, || {
                token
                    .apply(
                        &mut out,
                        &updates,
                        Reduction::Max,
                        Execution::on(&Serial).with_schedule(&schedule),
                    )
                    .unwrap();
            }),
        );
    }
    row(
        "se_max_dense_axis0 apply on threads, no bands",
        time(9, || {
            token
                .apply(
                    &mut out,
                    &updates,
                    Reduction::Max,
                    Execution::on(&par).with_schedule(&serial_only),
                )
                .unwrap();
        }),
    );
    row(
        "se_max_dense_axis0 apply on threads, bands",
        time(9, || {
            token
                .apply(&mut out, &updates, Reduction::Max, Execution::on(&par))
                .unwrap();
        }),
    );
    row(
        "se_max_dense_axis0 copy (floor part)",
        time(9, || out.copy_from_slice(&data)),
    );
    // The copying kernels' destination: warm, as `out` is above.
    let mut dst = vec![MaybeUninit::new(0f32); n * n];
    row(
        "se_max_dense_axis0 apply into CopyOf, serial (today)",
        time(9, || {
            token
                .apply(
                    CopyOf {
                        data: &data,
                        out: &mut dst,
                    },
                    &updates,
                    Reduction::Max,
                    Execution::SERIAL,
                )
                .unwrap();
        }),
    );
    row(
        "se_max_dense_axis0 apply into CopyOf, threads",
        time(9, || {
            token
                .apply(
                    CopyOf {
                        data: &data,
                        out: &mut dst,
                    },
                    &updates,
                    Reduction::Max,
                    Execution::on(&par),
                )
                .unwrap();
        }),
    );

    // se_ov_example6: [1000, 256, 7, 7] f32 (50 MB), 125x20x7x6 updates
    // along axis 0: one slab, indices short of the inner dims, so the
    // scatter is not split; the copy is.
    let (shape, ishape) = ([1000usize, 256, 7, 7], [125usize, 20, 7, 6]);
    let (n, m) = (
        shape.iter().product::<usize>(),
        ishape.iter().product::<usize>(),
    );
    let data: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let indices: Vec<i64> = (0..m).map(|_| (rng.next() % 1000) as i64).collect();
    let updates: Vec<f32> = (0..m).map(|i| -(i as f32)).collect();
    let plan = ElementsPlan::new(&shape, &ishape, &ishape, 0).unwrap();
    let token = plan.check_indices(&indices, Execution::SERIAL).unwrap();
    let mut dst = vec![MaybeUninit::new(0f32); n];
    row(
        "50 MB write_copy_par, 1 thread",
        time(9, || {
            write_copy_par(&Serial, &Schedule::DEFAULT, &mut dst, &data);
        }),
    );
    row(
        "50 MB write_copy_par, threads",
        time(9, || {
            write_copy_par(&par, &Schedule::DEFAULT, &mut dst, &data);
        }),
    );
    row(
        "se_ov_example6 apply into CopyOf, serial",
        time(9, || {
            token
                .apply(
                    CopyOf {
                        data: &data,
                        out: &mut dst,
                    },
                    &updates,
                    Reduction::None,
                    Execution::SERIAL,
                )
                .unwrap();
        }),
    );
    row(
        "se_ov_example6 apply into CopyOf (copy split), threads",
        time(9, || {
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
        }),
    );

    // snd_elems: 1e6 distinct random elements into [10000, 1000] f32.
    let (rows, cols, m) = (10_000usize, 1000usize, 1_000_000usize);
    let data: Vec<f32> = (0..rows * cols).map(|i| i as f32).collect();
    let mut flat: Vec<u64> = (0..m).map(|_| rng.next() % (rows * cols) as u64).collect();
    flat.sort_unstable();
    flat.dedup();
    // Shuffle back into random order.
    for i in (1..flat.len()).rev() {
        flat.swap(i, (rng.next() % (i as u64 + 1)) as usize);
    }
    let m = flat.len();
    let indices: Vec<i64> = flat
        .iter()
        .flat_map(|&f| [(f / cols as u64) as i64, (f % cols as u64) as i64])
        .collect();
    let updates: Vec<f32> = (0..m).map(|i| -(i as f32)).collect();
    let plan = NdPlan::new(&[rows, cols], &[m, 2], &[m]).unwrap();
    let mut out = data.clone();
    row(
        "snd_elems check_indices",
        time(9, || {
            std::hint::black_box(
                plan.check_indices(&indices, Execution::SERIAL, BlockSort::Off)
                    .unwrap(),
            );
        }),
    );
    row(
        "snd_elems check_indices, BlockSort (check + sort)",
        time(9, || {
            drop(
                plan.check_indices(
                    &indices,
                    Execution::on(&Serial),
                    BlockSort::ForElementBytes(4),
                )
                .unwrap(),
            )
        }),
    );
    row(
        "snd_elems check_indices, BlockSort (check + sort), threads",
        time(9, || {
            drop(
                plan.check_indices(&indices, Execution::on(&par), BlockSort::ForElementBytes(4))
                    .unwrap(),
            )
        }),
    );
    let token = plan
        .check_indices(&indices, Execution::SERIAL, BlockSort::Off)
        .unwrap();
    let sorted = plan
        .check_indices(
            &indices,
            Execution::on(&Serial),
            BlockSort::ForElementBytes(4),
        )
        .unwrap();
    assert!(sorted.is_sorted());
    row(
        "snd_elems apply, serial (today)",
        time(9, || {
            token
                .apply(&mut out, &updates, Reduction::None, Execution::SERIAL)
                .unwrap();
        }),
    );
    row(
        "snd_elems sorted apply, 1 thread",
        time(9, || {
            sorted
                .apply(&mut out, &updates, Reduction::None, Execution::on(&Serial))
                .unwrap();
        }),
    );
    row(
        "snd_elems sorted apply, threads",
        time(9, || {
            sorted
                .apply(&mut out, &updates, Reduction::None, Execution::on(&par))
                .unwrap();
        }),
    );
    row(
        "snd_elems check + apply, serial (today)",
        time(9, || {
            plan.check_indices(&indices, Execution::SERIAL, BlockSort::Off)
                .unwrap()
                .apply(&mut out, &updates, Reduction::None, Execution::SERIAL)
                .unwrap();
        }),
    );
    row(
        "snd_elems check (BlockSort) + apply, 1 thread",
        time(9, || {
            plan.check_indices(
                &indices,
                Execution::on(&Serial),
                BlockSort::ForElementBytes(4),
            )
            .unwrap()
            .apply(&mut out, &updates, Reduction::None, Execution::on(&Serial))
            .unwrap();
        }),
    );
    row(
        "snd_elems check (BlockSort) + apply, threads",
        time(9, || {
            plan.check_indices(&indices, Execution::on(&par), BlockSort::ForElementBytes(4))
                .unwrap()
                .apply(&mut out, &updates, Reduction::None, Execution::on(&par))
                .unwrap();
        }),
    );
    let mut dst = vec![MaybeUninit::new(0f32); rows * cols];
    row(
        "snd_elems apply into CopyOf, serial (today)",
        time(9, || {
            token
                .apply(
                    CopyOf {
                        data: &data,
                        out: &mut dst,
                    },
                    &updates,
                    Reduction::None,
                    Execution::SERIAL,
                )
                .unwrap();
        }),
    );
    row(
        "snd_elems sorted apply into CopyOf, 1 thread",
        time(9, || {
            sorted
                .apply(
                    CopyOf {
                        data: &data,
                        out: &mut dst,
                    },
                    &updates,
                    Reduction::None,
                    Execution::on(&Serial),
                )
                .unwrap();
        }),
    );
    row(
        "snd_elems sorted apply into CopyOf, threads",
        time(9, || {
            sorted
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
        }),
    );

    // GNN message passing: scatter-add of E x F into N x F, axis 0.
    for (edges, features, nodes) in [(17_000usize, 128usize, 659usize), (1_000_000, 64, 100_000)] {
        let data = vec![0f32; nodes * features];
        let indices: Vec<i64> = (0..edges)
            .flat_map(|_| {
                let node = (rng.next() % nodes as u64) as i64;
                std::iter::repeat_n(node, features)
            })
            .collect();
        let updates: Vec<f32> = (0..edges * features)
            .map(|i| (i % 13) as f32 * 0.5)
            .collect();
        let plan = ElementsPlan::new(
            &[nodes, features],
            &[edges, features],
            &[edges, features],
            0,
        )
        .unwrap();
        let token = plan.check_indices(&indices, Execution::SERIAL).unwrap();
        let mut out = data.clone();
        let name = format!("gnn {edges}x{features} into {nodes}");
        row(
            &format!("{name} check_indices"),
            time(5, || {
                std::hint::black_box(plan.check_indices(&indices, Execution::SERIAL).unwrap());
            }),
        );
        row(
            &format!("{name} apply, serial (today)"),
            time(5, || {
                token
                    .apply(&mut out, &updates, Reduction::Add, Execution::SERIAL)
                    .unwrap();
            }),
        );
        row(
            &format!("{name} apply on threads"),
            time(5, || {
                token
                    .apply(&mut out, &updates, Reduction::Add, Execution::on(&par))
                    .unwrap();
            }),
        );
    }
}
