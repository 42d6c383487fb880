//! Running one node test with one framework and judging the result.

use crate::compare::compare_with;
use crate::framework::{Framework, Mode};
use crate::node_test::{DataSet, NodeTest};
use crate::outcome::{FrameworkOutcome, Outcome, Phase};
use crate::panic_guard;
use std::cell::Cell;

/// Longest error text kept in a failure reason; error chains of deep model
/// failures can run to kilobytes and the reason must stay one readable line.
const MAX_REASON: usize = 400;

/// Runs `test` with `framework`, decluttered and optimized.
pub fn run_test(test: &NodeTest, framework: &dyn Framework) -> FrameworkOutcome {
    FrameworkOutcome {
        decluttered: run_mode(test, framework, Mode::Decluttered),
        optimized: run_mode(test, framework, Mode::Optimized),
    }
}

/// Runs every data set of `test` in one mode; the first non-pass decides.
///
/// Without `expected_error`, each data set must run and match its outputs.
/// With it, each data set must make loading or running fail with an error
/// containing the expected text (case-insensitive, searched in the full
/// `{:?}` error chain). A panic fails the test in both cases.
pub fn run_mode(test: &NodeTest, framework: &dyn Framework, mode: Mode) -> Outcome {
    if test.data_sets.is_empty() {
        // An error test may hold no data set when the error is raised while
        // loading or preparing: then the model is prepared but not run.
        return if test.expected_error.is_some() {
            run_data_set(test, None, framework, mode)
        } else {
            Outcome::Fail {
                phase: Phase::Load,
                reason: "no test_data_set_* directory in the test".to_string(),
            }
        };
    }
    let several = test.data_sets.len() > 1;
    for data_set in &test.data_sets {
        let outcome = run_data_set(test, Some(data_set), framework, mode);
        if !outcome.is_pass() {
            return if several {
                prefixed(outcome, &data_set.name)
            } else {
                outcome
            };
        }
    }
    Outcome::Pass
}

fn run_data_set(
    test: &NodeTest,
    data_set: Option<&DataSet>,
    framework: &dyn Framework,
    mode: Mode,
) -> Outcome {
    let inputs = data_set.map(|d| d.inputs.as_slice());
    let phase = Cell::new(Phase::Load);
    let model_path = test.model_path();
    let result =
        panic_guard::catch(|| framework.run(&model_path, inputs, mode, &mut |p| phase.set(p)));
    let phase = phase.get();
    let result = match result {
        Err(message) => {
            return Outcome::Panic {
                phase,
                message: shorten(message),
            };
        }
        Ok(result) => result,
    };
    match (result, &test.expected_error) {
        (Err(error), None) => Outcome::Fail {
            phase,
            reason: shorten(format!("{error:#}")),
        },
        (Err(error), Some(expected)) => {
            let chain = format!("{error:?}");
            if chain.to_lowercase().contains(&expected.to_lowercase()) {
                Outcome::Pass
            } else {
                Outcome::Fail {
                    phase,
                    reason: shorten(format!(
                        "expected error containing '{expected}', got: {error:#}"
                    )),
                }
            }
        }
        (Ok(_), Some(expected)) => Outcome::Fail {
            phase: Phase::Compare,
            reason: format!("expected error containing '{expected}', got Ok"),
        },
        (Ok(outputs), None) => match data_set {
            Some(data_set) => compare_outputs(&outputs, data_set, test.tolerance),
            None => Outcome::Fail {
                phase: Phase::Load,
                reason: "no data set to compare".into(),
            },
        },
    }
}

fn compare_outputs(
    outputs: &[tract_onnx::prelude::Tensor],
    data_set: &DataSet,
    tolerance: crate::compare::Tolerance,
) -> Outcome {
    if outputs.len() != data_set.outputs.len() {
        return Outcome::Fail {
            phase: Phase::Compare,
            reason: format!(
                "got {} outputs, expected {} (output_*.pb files)",
                outputs.len(),
                data_set.outputs.len()
            ),
        };
    }
    for (ix, (got, expected)) in outputs.iter().zip(&data_set.outputs).enumerate() {
        if let Err(mismatch) = compare_with(got, expected, tolerance) {
            return Outcome::Fail {
                phase: Phase::Compare,
                reason: format!("output {ix}: {mismatch}"),
            };
        }
    }
    Outcome::Pass
}

fn prefixed(outcome: Outcome, data_set: &str) -> Outcome {
    match outcome {
        Outcome::Pass => Outcome::Pass,
        Outcome::Fail { phase, reason } => Outcome::Fail {
            phase,
            reason: format!("{data_set}: {reason}"),
        },
        Outcome::Panic { phase, message } => Outcome::Panic {
            phase,
            message: format!("{data_set}: {message}"),
        },
    }
}

/// One line (error chains may embed tensor dumps with newlines), bounded.
fn shorten(s: String) -> String {
    let mut s = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if s.len() > MAX_REASON {
        let mut cut = MAX_REASON;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        s.push_str("...");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::Phase;
    use anyhow::{Result, bail};
    use std::path::{Path, PathBuf};
    use tract_onnx::prelude::{Tensor, tensor1};

    fn test_case(expected_error: Option<&str>, outputs: Vec<Tensor>) -> NodeTest {
        NodeTest {
            name: "test_synthetic".into(),
            dir: PathBuf::from("/nonexistent/test_synthetic"),
            expected_error: expected_error.map(str::to_string),
            tolerance: Default::default(),
            data_sets: vec![DataSet {
                name: "test_data_set_0".into(),
                inputs: vec![tensor1(&[1.0f32, 2.0])],
                outputs,
            }],
        }
    }

    type Closure =
        Box<dyn Fn(&Path, Option<&[Tensor]>, Mode, &mut dyn FnMut(Phase)) -> Result<Vec<Tensor>>>;

    /// A framework that doubles its input, failing or panicking on request.
    fn doubling(behaviour: &'static str) -> Closure {
        Box::new(
            move |_path: &Path,
                  inputs: Option<&[Tensor]>,
                  mode: Mode,
                  enter: &mut dyn FnMut(Phase)| {
                enter(Phase::Load);
                match behaviour {
                    "load-error" => bail!("Index 7 is out of bounds for axis 0"),
                    "panic" => {
                        enter(Phase::Run);
                        panic!("index out of bounds: the len is 2 but the index is 7")
                    }
                    "panic-when-optimized" if mode == Mode::Optimized => {
                        enter(Phase::Optimize);
                        panic!("optimizer bug")
                    }
                    _ => {}
                }
                let Some(inputs) = inputs else {
                    return Ok(vec![]);
                };
                enter(Phase::Run);
                let x = inputs[0].to_plain_array_view::<f32>()?.mapv(|v| v * 2.0);
                Ok(vec![x.into()])
            },
        )
    }

    #[test]
    fn matching_outputs_pass_in_both_modes() {
        let t = test_case(None, vec![tensor1(&[2.0f32, 4.0])]);
        let r = run_test(&t, &doubling("ok"));
        assert!(r.is_pass(), "{r:?}");
    }

    #[test]
    fn mismatch_is_reported_with_coordinates() {
        let t = test_case(None, vec![tensor1(&[2.0f32, 5.0])]);
        let r = run_test(&t, &doubling("ok"));
        assert_eq!(
            r.decluttered,
            Outcome::Fail {
                phase: Phase::Compare,
                reason: "output 0: value mismatch at [1]: got 4.0 expected 5.0".into()
            }
        );
    }

    #[test]
    fn wrong_output_count_fails() {
        let t = test_case(None, vec![]);
        let r = run_test(&t, &doubling("ok"));
        assert!(matches!(
            r.decluttered,
            Outcome::Fail {
                phase: Phase::Compare,
                ..
            }
        ));
    }

    #[test]
    fn expected_error_matches_case_insensitively() {
        let t = test_case(Some("OUT OF BOUNDS"), vec![]);
        assert!(run_test(&t, &doubling("load-error")).is_pass());
    }

    #[test]
    fn expected_error_but_ok_fails() {
        let t = test_case(Some("out of bounds"), vec![]);
        let r = run_test(&t, &doubling("ok"));
        assert_eq!(
            r.optimized,
            Outcome::Fail {
                phase: Phase::Compare,
                reason: "expected error containing 'out of bounds', got Ok".into()
            }
        );
    }

    #[test]
    fn expected_error_with_other_error_fails() {
        let t = test_case(Some("negative index"), vec![]);
        let r = run_test(&t, &doubling("load-error"));
        let Outcome::Fail {
            phase: Phase::Load,
            reason,
        } = &r.decluttered
        else {
            panic!("{r:?}")
        };
        assert!(reason.starts_with("expected error containing 'negative index', got: Index 7"));
    }

    #[test]
    fn panic_is_a_failure_even_when_an_error_is_expected() {
        let t = test_case(Some("out of bounds"), vec![]);
        let r = run_test(&t, &doubling("panic"));
        let Outcome::Panic {
            phase: Phase::Run,
            message,
        } = &r.decluttered
        else {
            panic!("{r:?}")
        };
        assert!(
            message.starts_with("index out of bounds: the len is 2"),
            "{message}"
        );
    }

    #[test]
    fn panic_in_one_mode_only() {
        let t = test_case(None, vec![tensor1(&[2.0f32, 4.0])]);
        let r = run_test(&t, &doubling("panic-when-optimized"));
        assert!(r.decluttered.is_pass());
        assert!(matches!(
            r.optimized,
            Outcome::Panic {
                phase: Phase::Optimize,
                ..
            }
        ));
        assert_eq!(r.short(), "PANIC(opt optimize)");
    }

    #[test]
    fn no_data_set_fails() {
        let mut t = test_case(None, vec![]);
        t.data_sets.clear();
        assert!(!run_test(&t, &doubling("ok")).is_pass());
    }

    #[test]
    fn error_test_without_data_set_prepares_only() {
        let mut t = test_case(Some("out of bounds"), vec![]);
        t.data_sets.clear();
        assert!(run_test(&t, &doubling("load-error")).is_pass());
        let r = run_test(&t, &doubling("ok"));
        assert!(
            matches!(&r.decluttered, Outcome::Fail { reason, .. } if reason.ends_with("got Ok"))
        );
    }
}
