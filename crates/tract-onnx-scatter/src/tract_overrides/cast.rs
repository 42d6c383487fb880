//! ONNX `Cast` and `CastLike`, exact to int64, symbolic through integer casts ([`OnnxCast`]).
//!
//! tract 0.23.9 builds `Cast(to=INT64)` as a cast to TDim, its type for shape values, whatever
//! the input: a float, an int32 or an int64 tensor of data comes out typed TDim and passes
//! through i32 on the way, so any value past 2^31 wraps or saturates (int64 1099511627781
//! becomes 5). And a cast of a shape value to another integer type (tf2onnx's
//! `Shape → Cast(int32) → Slice → Concat → Cast(int64) → Expand`, every
//! `tf.zeros([batch, units])`) cannot be evaluated while the shape holds a symbol, so the
//! shape's value is lost and the `Expand` has no rank.
//!
//! Contract: docs/contract.md, "Operators outside the scatter family", rows `Cast`, `CastLike`.

use tract_core::ops::cast::cast as stock_cast;
use tract_hir::internal::*;
use tract_onnx::model::ParsingContext;
use tract_onnx::pb::NodeProto;

use super::run_symbols::{BindRunSymbols, wire_after};

/// The builder registered for `Cast`.
pub(crate) fn cast(
    _ctx: &ParsingContext,
    node: &NodeProto,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    let to = node.get_attr::<DatumType>("to")?;
    Ok((expand(OnnxCast { to: Some(to) }), vec![]))
}

/// The builder registered for `CastLike`.
pub(crate) fn cast_like(
    _ctx: &ParsingContext,
    _node: &NodeProto,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    Ok((expand(OnnxCast { to: None }), vec![]))
}

/// `Cast` to `to`, or `CastLike` (to the type of input 1) when `to` is
/// `None`: one rule for both, on the input's type.
///
/// | input | `to` | output |
/// |---|---|---|
/// | a shape value (TDim) | int64 | the TDim value, as tract builds it |
/// | a shape value (TDim) holding a symbol at load | another integer type | the TDim value: the symbol stays, the value is the same integer |
/// | a shape value without symbols, or known only at run | another integer type | tract's cast |
/// | float16/32/64 | int64 | int64, truncated toward zero; NaN, ±inf and values outside the int64 range give `i64::MIN`, as onnxruntime on x86-64 (ONNX leaves them undefined) |
/// | any other type | int64 | int64 by tract's cast (exact for every integer and bool) |
/// | anything else | | exactly tract's `Cast` |
///
/// `CastLike(x, like)` takes `to` from `like`'s type (a TDim `like` is int64). A TDim input
/// holding symbols only the run binds goes through [`BindRunSymbols`] before tract's cast
/// evaluates it.
#[derive(Debug, Clone, Hash, PartialEq, Eq)]
pub(crate) struct OnnxCast {
    /// `Cast`'s `to` attribute as tract reads it; `None` for `CastLike`.
    pub(crate) to: Option<DatumType>,
}

/// What the output type depends on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OutputType {
    Is(DatumType),
    /// TDim when the input's value holds a symbol, else the target type.
    TDimIfSymbolic(DatumType),
}

/// The ONNX type an input of `like` stands for: tract carries ONNX int64
/// shape values as TDim.
fn onnx_type(dt: DatumType) -> DatumType {
    if dt == TDim::datum_type() {
        i64::datum_type()
    } else {
        dt
    }
}

fn output_type(from: DatumType, to: DatumType) -> OutputType {
    let tdim = TDim::datum_type();
    match (from == tdim, to) {
        (true, to) if to == i64::datum_type() => OutputType::Is(tdim),
        (true, to) if to.is_integer() => OutputType::TDimIfSymbolic(to),
        (_, to) => OutputType::Is(to),
    }
}

/// Whether `t` is a TDim tensor holding a symbol.
fn holds_symbol(t: &Tensor) -> TractResult<bool> {
    if t.datum_type() != TDim::datum_type() {
        return Ok(false);
    }
    Ok(t.try_as_plain_ram()?
        .as_slice::<TDim>()?
        .iter()
        .any(|d| d.to_i64().is_err()))
}

impl OnnxCast {
    fn op_name(&self) -> &'static str {
        match self.to {
            Some(_) => "Cast",
            None => "CastLike",
        }
    }

    /// The ONNX target type, once the inputs' facts tell it.
    fn target(&self, model: &TypedModel, inputs: &[OutletId]) -> TractResult<DatumType> {
        match self.to {
            Some(to) => Ok(to),
            None => {
                let like = inputs
                    .get(1)
                    .context("CastLike takes two inputs (input, target_type)")?;
                Ok(onnx_type(model.outlet_fact(*like)?.datum_type))
            }
        }
    }

    /// Wires the cast of `input` to `to` into `model`; `tdim_out` says the
    /// inference facts typed the output TDim (a symbolic shape value).
    fn wire_cast(
        &self,
        prefix: &str,
        model: &mut TypedModel,
        input: OutletId,
        to: DatumType,
        tdim_out: bool,
    ) -> TractResult<TVec<OutletId>> {
        let fact = model.outlet_fact(input)?.clone();
        let from = fact.datum_type;
        let keep_tdim = match output_type(from, to) {
            OutputType::Is(dt) => dt == from && from == TDim::datum_type(),
            OutputType::TDimIfSymbolic(_) => {
                tdim_out || fact.konst.as_deref().map(holds_symbol).transpose()? == Some(true)
            }
        };
        if keep_tdim && to != i64::datum_type() {
            // The same integer, carried as a shape value.
            return Ok(tvec![input]);
        }
        let to = if keep_tdim { TDim::datum_type() } else { to };
        if to == i64::datum_type() && from.is_float() {
            return model.wire_node(prefix, FloatToInt64, &[input]);
        }
        // tract's cast, its TDim input holding run-bound symbols bound first.
        let binders = super::run_symbols::binders(model, &[input])?;
        let input = wire_after(
            model,
            format!("{prefix}.bind_symbols.0"),
            BindRunSymbols,
            input,
            binders,
        )?;
        model.wire_node(prefix, stock_cast(to), &[input])
    }
}

impl Expansion for OnnxCast {
    fn name(&self) -> StaticName {
        format!("onnx.{}", self.op_name()).into()
    }

    fn rules<'r, 'p: 'r, 's: 'r>(
        &'s self,
        s: &mut Solver<'r>,
        inputs: &'p [TensorProxy],
        outputs: &'p [TensorProxy],
    ) -> InferenceResult {
        check_input_arity(inputs, if self.to.is_some() { 1 } else { 2 })?;
        check_output_arity(outputs, 1)?;
        s.equals(&outputs[0].rank, &inputs[0].rank)?;
        s.equals(&outputs[0].shape, &inputs[0].shape)?;
        let decide =
            move |s: &mut Solver<'r>, from: DatumType, to: DatumType| match output_type(from, to) {
                OutputType::Is(dt) => s.equals(&outputs[0].datum_type, dt),
                OutputType::TDimIfSymbolic(to) => s.given(&inputs[0].value, move |s, value| {
                    let dt = if holds_symbol(&value)? {
                        TDim::datum_type()
                    } else {
                        to
                    };
                    s.equals(&outputs[0].datum_type, dt)
                }),
            };
        match self.to {
            Some(to) => s.given(&inputs[0].datum_type, move |s, from| decide(s, from, to)),
            None => s.given_2(
                &inputs[0].datum_type,
                &inputs[1].datum_type,
                move |s, from, like| decide(s, from, onnx_type(like)),
            ),
        }
    }

    fn wire(
        &self,
        prefix: &str,
        model: &mut TypedModel,
        inputs: &[OutletId],
    ) -> TractResult<TVec<OutletId>> {
        let to = self.target(model, inputs)?;
        self.wire_cast(prefix, model, inputs[0], to, false)
    }

    fn wire_with_inference_model_and_node(
        &self,
        prefix: &str,
        source: &InferenceModel,
        node: &InferenceNode,
        model: &mut TypedModel,
        inputs: &[OutletId],
    ) -> TractResult<TVec<OutletId>> {
        let to = self.target(model, inputs)?;
        let tdim_out = source
            .outlet_fact(OutletId::new(node.id, 0))?
            .datum_type
            .concretize()
            == Some(TDim::datum_type());
        self.wire_cast(prefix, model, inputs[0], to, tdim_out)
    }
}

/// float16/32/64 to int64 as onnxruntime does it on x86-64: truncated
/// toward zero, and `i64::MIN` for NaN, ±inf and values outside the int64
/// range (the conversion instruction's "indefinite integer").
#[derive(Debug, Clone, Hash, PartialEq, Eq)]
pub(crate) struct FloatToInt64;

/// `x` truncated to int64, `i64::MIN` where it has no int64 value.
pub(crate) fn float_to_int64(x: f64) -> i64 {
    // 2^63 is exactly representable; every float below it and at or above
    // -2^63 truncates into range. NaN fails both comparisons.
    const BOUND: f64 = 9_223_372_036_854_775_808.0;
    if (-BOUND..BOUND).contains(&x) {
        x as i64
    } else {
        i64::MIN
    }
}

impl Op for FloatToInt64 {
    fn name(&self) -> StaticName {
        "FloatToInt64".into()
    }

    op_as_typed_op!();
}

impl EvalOp for FloatToInt64 {
    op_out_of_plan!();

    fn eval(&self, _ctx: &EvalContext, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        let input = args_1!(inputs);
        let wide = input.cast_to::<f64>()?;
        let values: Vec<i64> = wide
            .try_as_plain_ram()?
            .as_slice::<f64>()?
            .iter()
            .map(|&x| float_to_int64(x))
            .collect();
        let array = tract_ndarray::ArrayD::from_shape_vec(input.shape(), values)?;
        Ok(tvec!(Tensor::from(array).into_tvalue()))
    }
}

impl TypedOp for FloatToInt64 {
    as_op!();

    fn output_facts(&self, inputs: &[&TypedFact]) -> TractResult<TVec<TypedFact>> {
        ensure!(
            inputs[0].datum_type.is_float(),
            "FloatToInt64 takes floats, got {:?}",
            inputs[0].datum_type
        );
        Ok(tvec!(i64::fact(inputs[0].shape.clone())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_truncate_toward_zero_and_have_no_value_outside_int64() {
        assert_eq!(float_to_int64(2.9), 2);
        assert_eq!(float_to_int64(-2.9), -2);
        assert_eq!(float_to_int64(3e9), 3_000_000_000);
        assert_eq!(float_to_int64(-(2f64.powi(63))), i64::MIN);
        assert_eq!(float_to_int64(2f64.powi(63)), i64::MIN);
        assert_eq!(float_to_int64(1e19), i64::MIN);
        assert_eq!(float_to_int64(-1e19), i64::MIN);
        assert_eq!(float_to_int64(f64::NAN), i64::MIN);
        assert_eq!(float_to_int64(f64::INFINITY), i64::MIN);
        assert_eq!(float_to_int64(f64::NEG_INFINITY), i64::MIN);
        // The largest float32 below 2^63 is in range.
        let below = f32::from_bits((9.223_372e18f32).to_bits() - 1) as f64;
        assert_eq!(float_to_int64(below), below as i64);
    }

    #[test]
    fn only_a_shape_value_to_a_narrower_integer_depends_on_its_value() {
        let tdim = TDim::datum_type();
        assert_eq!(output_type(tdim, i64::datum_type()), OutputType::Is(tdim));
        assert_eq!(
            output_type(tdim, i32::datum_type()),
            OutputType::TDimIfSymbolic(i32::datum_type())
        );
        assert_eq!(
            output_type(f32::datum_type(), i64::datum_type()),
            OutputType::Is(i64::datum_type())
        );
        assert_eq!(
            output_type(tdim, f32::datum_type()),
            OutputType::Is(f32::datum_type())
        );
    }
}
