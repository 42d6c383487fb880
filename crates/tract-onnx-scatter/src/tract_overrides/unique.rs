//! ONNX `Unique` (opset 11), which tract 0.23.9 does not implement: [`Unique`], the typed op,
//! and `InferUnique` before typing.
//!
//! tf2onnx lowers `tf.math.unsorted_segment_sum/max/min` (segment sums around a ScatterND)
//! through `Unique`, so those models stop in tract with "Unimplemented(Unique)". The number of
//! unique values is known only at run time: it is a symbol the op mints, bound by the plan from
//! the output it produces, like `NonZero`'s count. Contract: docs/contract.md, "Unique (tract
//! override)".

use std::cmp::Ordering;

use tract_hir::internal::*;
use tract_hir::tract_ndarray::{Array1, ArrayD, Axis};
use tract_onnx::model::ParsingContext;
use tract_onnx::pb::NodeProto;

/// The builder registered for `Unique`.
pub(crate) fn unique(
    ctx: &ParsingContext,
    node: &NodeProto,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    let axis = node.get_attr_opt::<i64>("axis")?;
    let sorted = node.get_attr_opt::<i64>("sorted")?.unwrap_or(1) != 0;
    ensure!(
        node.output.len() <= 4,
        "Unique node '{}': has {} outputs, expected at most 4 (Y, indices, inverse_indices, counts)",
        node.name,
        node.output.len()
    );
    // tract gives a node only its named outputs, in order.
    let present: Vec<usize> = (0..node.output.len())
        .filter(|&i| !node.output[i].is_empty())
        .collect();
    let count = ctx.template.symbols.new_with_prefix("unique");
    Ok((
        Box::new(InferUnique {
            op: Unique {
                node: node.name.clone(),
                axis,
                sorted,
                count,
            },
            present,
        }),
        vec![],
    ))
}

/// The typed op: always computes the four outputs.
#[derive(Debug, Clone, Hash, PartialEq, Eq)]
pub struct Unique {
    /// The ONNX node's name, for errors.
    pub(crate) node: String,
    /// As given (may be negative); `None`: flatten.
    pub(crate) axis: Option<i64>,
    /// ONNX's `sorted` (default 1): `Y` ascending; false keeps the order of
    /// first occurrence.
    pub(crate) sorted: bool,
    /// The number of unique values or slices.
    pub(crate) count: Symbol,
}

impl Unique {
    fn axis_for(&self, rank: usize) -> TractResult<Option<usize>> {
        let Some(axis) = self.axis else {
            return Ok(None);
        };
        let pos = if axis < 0 { axis + rank as i64 } else { axis };
        if !(0..rank as i64).contains(&pos) {
            bail!(
                "Unique node '{}': axis {axis} is out of range for rank {rank} (valid range [-{rank}, {}])",
                self.node,
                rank as i64 - 1
            );
        }
        Ok(Some(pos as usize))
    }

    fn eval_t<T: Datum + PartialOrd>(&self, input: &Tensor) -> TractResult<TVec<TValue>> {
        let view = input.to_plain_array_view::<T>()?;
        let axis = self.axis_for(input.rank())?;
        let data: ArrayD<T> = match axis {
            Some(_) => view.to_owned(),
            None => view.iter().cloned().collect::<Array1<T>>().into_dyn(),
        };
        let axis = Axis(axis.unwrap_or(0));
        let n = data.shape()[axis.0];
        let slice = |k: usize| data.index_axis(axis, k);
        // A total order, as sorting needs: NaN after every number, all NaNs
        // one value (numpy.unique's default).
        let total = |x: &T, y: &T| {
            x.partial_cmp(y).unwrap_or_else(|| {
                #[allow(clippy::eq_op)] // `v != v` is how a PartialOrd type says NaN
                let nan = |v: &T| v != v;
                nan(x).cmp(&nan(y))
            })
        };
        let compare = |a: &usize, b: &usize| {
            slice(*a)
                .iter()
                .zip(slice(*b).iter())
                .map(|(x, y)| total(x, y))
                .find(|o| o.is_ne())
                .unwrap_or(Ordering::Equal)
        };
        // A zero-volume input may still have a long axis (`[2^40, 0]`): the
        // positions and inverse_indices hold one value per slice, so memory
        // the system refuses is an error, not an abort.
        let mut order: Vec<usize> = vec![];
        let mut inverse: Vec<i64> = vec![];
        if order.try_reserve_exact(n).is_err() || inverse.try_reserve_exact(n).is_err() {
            bail!(
                "Unique node '{}': an axis of {n} slices (input shape {:?}) needs {} bytes of positions and inverse_indices, which the system refuses",
                self.node,
                input.shape(),
                (n as u128) * 16
            );
        }
        // Stable: equal slices keep ascending positions, the first first.
        order.extend(0..n);
        order.sort_by(compare);
        let mut groups: Vec<Vec<usize>> = vec![];
        for k in order {
            match groups.last_mut() {
                Some(g) if compare(&g[0], &k) == Ordering::Equal => g.push(k),
                _ => groups.push(vec![k]),
            }
        }
        if !self.sorted {
            groups.sort_by_key(|g| g[0]);
        }
        let firsts: Vec<usize> = groups.iter().map(|g| g[0]).collect();
        inverse.resize(n, 0);
        for (position, g) in groups.iter().enumerate() {
            for &k in g {
                inverse[k] = position as i64;
            }
        }
        let y = data.select(axis, &firsts);
        let indices: Vec<i64> = firsts.iter().map(|&k| k as i64).collect();
        let counts: Vec<i64> = groups.iter().map(|g| g.len() as i64).collect();
        Ok(tvec!(
            Tensor::from(y).into_tvalue(),
            tensor1(&indices).into_tvalue(),
            tensor1(&inverse).into_tvalue(),
            tensor1(&counts).into_tvalue(),
        ))
    }
}

impl Op for Unique {
    fn name(&self) -> StaticName {
        "Unique".into()
    }

    fn info(&self) -> TractResult<Vec<String>> {
        Ok(vec![format!(
            "axis: {:?} sorted: {}",
            self.axis, self.sorted
        )])
    }

    fn mints_runtime_symbols(&self) -> bool {
        true
    }

    op_as_typed_op!();
}

impl EvalOp for Unique {
    op_out_of_plan!();

    fn eval(&self, _ctx: &EvalContext, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        ensure!(
            inputs.len() == 1,
            "Unique node '{}': expects 1 input, got {}",
            self.node,
            inputs.len()
        );
        let input = &inputs[0];
        match input.datum_type() {
            DatumType::Bool => self.eval_t::<bool>(input),
            DatumType::String => self.eval_t::<String>(input),
            DatumType::TDim => self.eval_t::<i64>(&*input.cast_to::<i64>()?),
            dt if dt.is_number() && !dt.is_quantized() => {
                dispatch_numbers!(Self::eval_t(dt)(self, input))
            }
            dt => bail!(
                "Unique node '{}': unsupported element type {dt:?}",
                self.node
            ),
        }
    }
}

impl TypedOp for Unique {
    as_op!();

    fn output_facts(&self, inputs: &[&TypedFact]) -> TractResult<TVec<TypedFact>> {
        let input = inputs[0];
        let dt = if input.datum_type == DatumType::TDim {
            DatumType::I64
        } else {
            input.datum_type
        };
        let count = self.count.to_dim();
        let (y, n): (TVec<TDim>, TDim) = match self.axis_for(input.rank())? {
            Some(axis) => {
                let mut shape = input.shape.to_tvec();
                let n = std::mem::replace(&mut shape[axis], count.clone());
                (shape, n)
            }
            None => (tvec![count.clone()], input.shape.volume()),
        };
        Ok(tvec!(
            dt.fact(y),
            i64::fact([count.clone()]),
            i64::fact([n]),
            i64::fact([count]),
        ))
    }
}

/// `Unique` before typing; `present` lists which of the four outputs the
/// node names (optional ones may be absent, in the middle too).
#[derive(Debug, Clone, Hash, PartialEq, Eq)]
pub(crate) struct InferUnique {
    op: Unique,
    present: Vec<usize>,
}

impl InferUnique {
    /// The proxy of output `which` (0: Y, 1: indices, 2: inverse, 3: counts), if named.
    fn output<'p>(&self, outputs: &'p [TensorProxy], which: usize) -> Option<&'p TensorProxy> {
        self.present
            .iter()
            .position(|&p| p == which)
            .map(|i| &outputs[i])
    }
}

impl Op for InferUnique {
    fn name(&self) -> StaticName {
        "Unique".into()
    }

    not_a_typed_op!();
}

impl EvalOp for InferUnique {
    op_out_of_plan!();

    fn eval(&self, ctx: &EvalContext, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        let all = self.op.eval(ctx, inputs)?;
        Ok(self.present.iter().map(|&p| all[p].clone()).collect())
    }
}

impl InferenceRulesOp for InferUnique {
    fn rules<'r, 'p: 'r, 's: 'r>(
        &'s self,
        s: &mut Solver<'r>,
        inputs: &'p [TensorProxy],
        outputs: &'p [TensorProxy],
    ) -> InferenceResult {
        check_input_arity(inputs, 1)?;
        check_output_arity(outputs, self.present.len())?;
        if let Some(y) = self.output(outputs, 0) {
            s.equals(&y.datum_type, &inputs[0].datum_type)?;
        }
        for which in 1..4 {
            if let Some(output) = self.output(outputs, which) {
                s.equals(&output.datum_type, i64::datum_type())?;
                s.equals(&output.rank, 1)?;
                if which != 2 {
                    s.equals(&output.shape[0], self.op.count.to_dim())?;
                }
            }
        }
        let y = self.output(outputs, 0);
        let inverse = self.output(outputs, 2);
        s.given(&inputs[0].shape, move |s, shape| {
            let count = self.op.count.to_dim();
            let n = match self.op.axis_for(shape.len())? {
                Some(axis) => {
                    if let Some(y) = y {
                        s.equals(&y.rank, shape.len() as i64)?;
                        for (i, d) in shape.iter().enumerate() {
                            s.equals(
                                &y.shape[i],
                                if i == axis { count.clone() } else { d.clone() },
                            )?;
                        }
                    }
                    shape[axis].clone()
                }
                None => {
                    if let Some(y) = y {
                        s.equals(&y.rank, 1)?;
                        s.equals(&y.shape[0], count)?;
                    }
                    shape.iter().product()
                }
            };
            if let Some(inverse) = inverse {
                s.equals(&inverse.shape[0], n)?;
            }
            Ok(())
        })
    }

    fn nboutputs(&self) -> TractResult<usize> {
        Ok(self.present.len())
    }

    fn to_typed(
        &self,
        _source: &InferenceModel,
        node: &InferenceNode,
        target: &mut TypedModel,
        mapping: &HashMap<OutletId, OutletId>,
    ) -> TractResult<TVec<OutletId>> {
        let inputs: TVec<OutletId> = node.inputs.iter().map(|o| mapping[o]).collect();
        let all = target.wire_node(&node.name, self.op.clone(), &inputs)?;
        Ok(self.present.iter().map(|&p| all[p]).collect())
    }

    as_op!();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_axis_of_empty_slices_past_memory_is_an_error_naming_the_node() {
        let op = Unique {
            node: "u".into(),
            axis: Some(0),
            sorted: true,
            count: SymbolScope::default().sym("n"),
        };
        let input = Tensor::zero::<f32>(&[1 << 44, 0]).unwrap();
        let err = op.eval_t::<f32>(&input).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Unique node 'u': an axis of 17592186044416 slices (input shape [17592186044416, 0]) needs 281474976710656 bytes of positions and inverse_indices, which the system refuses"
        );
    }

    #[test]
    fn a_short_axis_of_empty_slices_is_one_unique_slice() {
        let op = Unique {
            node: "u".into(),
            axis: Some(0),
            sorted: true,
            count: SymbolScope::default().sym("n"),
        };
        let out = op
            .eval_t::<f32>(&Tensor::zero::<f32>(&[3, 0]).unwrap())
            .unwrap();
        assert_eq!(out[0].shape(), &[1, 0]);
        assert_eq!(
            out[2]
                .try_as_plain_ram()
                .unwrap()
                .as_slice::<i64>()
                .unwrap(),
            &[0, 0, 0]
        );
        assert_eq!(
            out[3]
                .try_as_plain_ram()
                .unwrap()
                .as_slice::<i64>()
                .unwrap(),
            &[3]
        );
    }
}
