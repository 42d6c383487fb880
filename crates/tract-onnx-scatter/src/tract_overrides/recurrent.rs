//! ONNX `GRU`, `LSTM` and `RNN` as the spec runs them, and [`Recurrent`], the typed op that runs
//! what tract 0.23.9's own cell cannot.
//!
//! tract builds the three as a `Scan` over its own cell (or a fused `GruSeq`). That cell reads
//! neither `activations`, `activation_alpha`, `activation_beta`, `clip` nor `input_forget`,
//! runs a one-direction node forward whatever its `direction`, and refuses every
//! `sequence_lens` but a constant equal to the time dim ("Non constant seq_len is not
//! supported"): PyTorch's `pack_padded_sequence(..., enforce_sorted=False)` exports give the
//! lengths at run time. Where stock tract's op computes the node (the contract's row "stock's
//! op"), the node is stock's, op for op and fact for fact.
//!
//! Contract (inputs, outputs, layouts, lengths, activations, `clip`): docs/contract.md,
//! "GRU, LSTM, RNN (tract override)".

use tract_hir::internal::*;
use tract_hir::tract_core::ndarray::{
    Array2, Array3, ArrayView1, ArrayView2, Axis, Ix3, NdFloat, s,
};
use tract_hir::tract_core::num_traits::NumCast;
use tract_onnx::model::{ParsingContext, optional_inputs, optional_outputs};
use tract_onnx::pb::NodeProto;

use super::retyped::{Retyped, Typing};
use super::run_symbols::row_lengths;

/// The builder registered for `GRU`.
pub(crate) fn gru(
    ctx: &ParsingContext,
    node: &NodeProto,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    let linear_before_reset = node
        .get_attr_opt::<i64>("linear_before_reset")?
        .unwrap_or(0)
        != 0;
    build(
        ctx,
        node,
        Cell::Gru {
            linear_before_reset,
        },
    )
}

/// The builder registered for `LSTM`.
pub(crate) fn lstm(
    ctx: &ParsingContext,
    node: &NodeProto,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    let input_forget = node.get_attr_opt::<i64>("input_forget")?.unwrap_or(0) != 0;
    build(ctx, node, Cell::Lstm { input_forget })
}

/// The builder registered for `RNN`.
pub(crate) fn rnn(
    ctx: &ParsingContext,
    node: &NodeProto,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    build(ctx, node, Cell::Rnn)
}

/// tract's own op (its analysis is the node's), typed by [`RecurrentTyping`].
fn build(
    ctx: &ParsingContext,
    node: &NodeProto,
    cell: Cell,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    let op = Recurrent::from_node(node, cell)?;
    Retyped::stock_built(cell.op_type(), ctx, node, RecurrentTyping(op))
}

/// The cell a recurrent node runs, with its own attributes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cell {
    /// `GRU`; gates `z`, `r`, `h`.
    Gru {
        /// The reset gate scales `Ht-1·Rhᵀ + Rbh` rather than `Ht-1`.
        linear_before_reset: bool,
    },
    /// `LSTM`; gates `i`, `o`, `f`, `c`.
    Lstm {
        /// The forget gate is `1 - i`.
        input_forget: bool,
    },
    /// `RNN`; one gate.
    Rnn,
}

impl Cell {
    fn op_type(self) -> &'static str {
        match self {
            Cell::Gru { .. } => "GRU",
            Cell::Lstm { .. } => "LSTM",
            Cell::Rnn => "RNN",
        }
    }

    /// Gates: blocks of `hidden_size` rows in `W` and `R`.
    fn gates(self) -> usize {
        match self {
            Cell::Gru { .. } => 3,
            Cell::Lstm { .. } => 4,
            Cell::Rnn => 1,
        }
    }

    /// ONNX's default activations of one direction.
    fn default_activations(self) -> &'static [Activation] {
        match self {
            Cell::Gru { .. } => &[Activation::Sigmoid, Activation::Tanh],
            Cell::Lstm { .. } => &[Activation::Sigmoid, Activation::Tanh, Activation::Tanh],
            Cell::Rnn => &[Activation::Tanh],
        }
    }
}

/// An activation function of a recurrent cell, with its alpha and beta.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Activation {
    /// `max(0, x)`.
    Relu,
    /// `tanh(x)`.
    Tanh,
    /// `1 / (1 + exp(-x))`.
    Sigmoid,
    /// `alpha * x + beta`.
    Affine(f32, f32),
    /// `x` if `x >= 0`, else `alpha * x`.
    LeakyRelu(f32),
    /// `x` if `x > alpha`, else 0.
    ThresholdedRelu(f32),
    /// `alpha * tanh(beta * x)`.
    ScaledTanh(f32, f32),
    /// `max(0, min(1, alpha * x + beta))`.
    HardSigmoid(f32, f32),
    /// `x` if `x >= 0`, else `alpha * (exp(x) - 1)`.
    Elu(f32),
    /// `x / (1 + |x|)`.
    Softsign,
    /// `ln(1 + exp(x))`.
    Softplus,
}

impl Activation {
    /// The activation `name` (any case, as onnxruntime reads it), taking
    /// its alpha and beta from `alphas` and `betas` when it has them.
    fn parse(
        node: &str,
        name: &str,
        alphas: &mut impl Iterator<Item = f32>,
        betas: &mut impl Iterator<Item = f32>,
    ) -> TractResult<Activation> {
        let param = |it: &mut dyn Iterator<Item = f32>, which: &str, default: Option<f32>| {
            it.next().or(default).with_context(|| {
                format!("node '{node}': activation {name} needs an activation_{which} value")
            })
        };
        Ok(match name.to_ascii_lowercase().as_str() {
            "relu" => Activation::Relu,
            "tanh" => Activation::Tanh,
            "sigmoid" => Activation::Sigmoid,
            "affine" => {
                Activation::Affine(param(alphas, "alpha", None)?, param(betas, "beta", None)?)
            }
            "leakyrelu" => Activation::LeakyRelu(param(alphas, "alpha", Some(0.01))?),
            "thresholdedrelu" => Activation::ThresholdedRelu(param(alphas, "alpha", Some(1.0))?),
            "scaledtanh" => {
                Activation::ScaledTanh(param(alphas, "alpha", None)?, param(betas, "beta", None)?)
            }
            "hardsigmoid" => Activation::HardSigmoid(
                param(alphas, "alpha", Some(0.2))?,
                param(betas, "beta", Some(0.5))?,
            ),
            "elu" => Activation::Elu(param(alphas, "alpha", Some(1.0))?),
            "softsign" => Activation::Softsign,
            "softplus" => Activation::Softplus,
            _ => bail!(
                "node '{node}': activation {name:?} is not one ONNX lists (Relu, Tanh, Sigmoid, Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign, Softplus)"
            ),
        })
    }

    fn apply<T: NdFloat>(self, x: T) -> T {
        let c = |v: f32| <T as NumCast>::from(v).unwrap_or_else(T::zero);
        let one = T::one();
        match self {
            Activation::Relu => x.max(T::zero()),
            Activation::Tanh => x.tanh(),
            Activation::Sigmoid => one / (one + (-x).exp()),
            Activation::Affine(a, b) => c(a) * x + c(b),
            Activation::LeakyRelu(a) => {
                if x >= T::zero() {
                    x
                } else {
                    c(a) * x
                }
            }
            Activation::ThresholdedRelu(a) => {
                if x > c(a) {
                    x
                } else {
                    T::zero()
                }
            }
            Activation::ScaledTanh(a, b) => c(a) * (c(b) * x).tanh(),
            Activation::HardSigmoid(a, b) => (c(a) * x + c(b)).min(one).max(T::zero()),
            Activation::Elu(a) => {
                if x >= T::zero() {
                    x
                } else {
                    c(a) * (x.exp() - one)
                }
            }
            Activation::Softsign => x / (one + x.abs()),
            Activation::Softplus => (x.exp() + one).ln(),
        }
    }
}

/// Where each optional ONNX input and output sits among the node's
/// present ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Slots {
    /// Input `B`.
    pub(crate) b: Option<usize>,
    /// Input `sequence_lens`.
    pub(crate) sequence_lens: Option<usize>,
    /// Input `initial_h`.
    pub(crate) initial_h: Option<usize>,
    /// Input `initial_c` (LSTM).
    pub(crate) initial_c: Option<usize>,
    /// Input `P` (LSTM).
    pub(crate) p: Option<usize>,
    /// Output `Y`.
    pub(crate) y: Option<usize>,
    /// Output `Y_h`.
    pub(crate) y_h: Option<usize>,
    /// Output `Y_c` (LSTM).
    pub(crate) y_c: Option<usize>,
}

/// A `GRU`, `LSTM` or `RNN` node run as ONNX specifies (docs/contract.md,
/// "GRU, LSTM, RNN (tract override)"): run-time `sequence_lens`, every activation, `clip`, both
/// directions and layouts. Its inputs and outputs are the node's present
/// ones, in the node's order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Recurrent {
    /// The ONNX node's name, for errors.
    pub(crate) node: String,
    /// The op and its cell's attributes.
    pub(crate) cell: Cell,
    /// Where the optional inputs and outputs sit.
    pub(crate) slots: Slots,
    /// `layout` 1: `X` is `[batch, seq_length, input_size]`.
    pub(crate) batch_first: bool,
    /// `direction`: "forward", "reverse" or "bidirectional".
    pub(crate) direction: Direction,
    /// The activations of each direction, `Cell::default_activations`'s
    /// length each.
    pub(crate) activations: Vec<Vec<Activation>>,
    /// `clip`: every gate's input is bounded to `[-clip, clip]`.
    pub(crate) clip: Option<f32>,
}

/// ONNX's `direction` attribute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Direction {
    /// From step 0.
    Forward,
    /// From each row's last step.
    Reverse,
    /// Both: direction 0 forward, 1 reverse.
    Bidirectional,
}

impl Direction {
    fn count(self) -> usize {
        if self == Direction::Bidirectional {
            2
        } else {
            1
        }
    }

    /// Whether direction `d` (0 or 1) runs from each row's last step.
    fn reversed(self, d: usize) -> bool {
        self == Direction::Reverse || d == 1
    }
}

impl Recurrent {
    /// The op for `node`, its attributes read and checked.
    pub(crate) fn from_node(node: &NodeProto, cell: Cell) -> TractResult<Recurrent> {
        let name = &node.name;
        let op = cell.op_type();
        let mut inputs = optional_inputs(node).skip(3);
        let mut outputs = optional_outputs(node);
        let mut next_in = || inputs.next().flatten();
        let mut slots = Slots {
            b: next_in(),
            sequence_lens: next_in(),
            initial_h: next_in(),
            ..Slots::default()
        };
        if let Cell::Lstm { .. } = cell {
            slots.initial_c = next_in();
            slots.p = next_in();
        }
        slots.y = outputs.next().flatten();
        slots.y_h = outputs.next().flatten();
        if let Cell::Lstm { .. } = cell {
            slots.y_c = outputs.next().flatten();
        }
        let layout = node.get_attr_opt::<i64>("layout")?.unwrap_or(0);
        ensure!(
            layout == 0 || layout == 1,
            "{op} node '{name}': layout {layout}, expected 0 or 1"
        );
        let direction = match node.get_attr_opt::<&str>("direction")?.unwrap_or("forward") {
            "forward" => Direction::Forward,
            "reverse" => Direction::Reverse,
            "bidirectional" => Direction::Bidirectional,
            other => bail!(
                "{op} node '{name}': direction {other:?}, expected \"forward\", \"reverse\" or \"bidirectional\""
            ),
        };
        let per_direction = cell.default_activations().len();
        let names: Vec<&str> = node
            .get_attr_opt_vec::<&str>("activations")?
            .unwrap_or_default();
        let alphas = node
            .get_attr_opt_vec::<f32>("activation_alpha")?
            .unwrap_or_default();
        let betas = node
            .get_attr_opt_vec::<f32>("activation_beta")?
            .unwrap_or_default();
        let (mut alphas, mut betas) = (alphas.into_iter(), betas.into_iter());
        let mut parsed = names
            .iter()
            .map(|n| Activation::parse(name, n, &mut alphas, &mut betas))
            .collect::<TractResult<Vec<_>>>()
            .with_context(|| format!("{op} node '{name}'"))?;
        if parsed.is_empty() {
            parsed = cell.default_activations().to_vec();
        }
        let dirs = direction.count();
        // One direction's list for a bidirectional node serves both, as
        // onnxruntime reads it.
        if parsed.len() == per_direction && dirs == 2 {
            parsed.extend_from_within(..);
        }
        ensure!(
            parsed.len() == per_direction * dirs,
            "{op} node '{name}': {} activations, expected {} ({per_direction} per direction)",
            parsed.len(),
            per_direction * dirs
        );
        let activations = parsed.chunks(per_direction).map(|c| c.to_vec()).collect();
        let clip = node.get_attr_opt::<f32>("clip")?;
        if let Some(c) = clip {
            ensure!(
                c >= 0.0,
                "{op} node '{name}': clip {c}, expected a value at least 0"
            );
        }
        Ok(Recurrent {
            node: name.clone(),
            cell,
            slots,
            batch_first: layout == 1,
            direction,
            activations,
            clip,
        })
    }

    fn op_type(&self) -> &'static str {
        self.cell.op_type()
    }

    /// Whether stock tract's cell computes what this node asks for, given
    /// its inputs' facts: stock's activations, no clip, no input_forget, a
    /// direction and layout its wiring gets right, and no `sequence_lens`
    /// but a constant equal to the time dim.
    fn stock_computes(&self, facts: &[TypedFact]) -> TractResult<bool> {
        let standard = self
            .activations
            .iter()
            .all(|a| a == self.cell.default_activations());
        let input_forget = matches!(self.cell, Cell::Lstm { input_forget: true });
        // Stock concatenates a bidirectional node's directions along the
        // time-major axes; a one-direction node runs forward whatever its
        // `direction`.
        let direction = match self.direction {
            Direction::Forward => true,
            Direction::Reverse => false,
            Direction::Bidirectional => !self.batch_first,
        };
        // Stock builds zero initial states of the batch it reads at load.
        let x = &facts[0];
        let batch = &x.shape[!self.batch_first as usize];
        let states_given = self.slots.initial_h.is_some()
            && (self.slots.initial_c.is_some() || !matches!(self.cell, Cell::Lstm { .. }));
        let states = states_given || batch.to_usize().is_ok();
        let lens = match self.slots.sequence_lens {
            None => true,
            Some(slot) => match &facts[slot].konst {
                None => false,
                Some(k) => {
                    let time = &x.shape[self.batch_first as usize];
                    let k = k.cast_to::<TDim>()?;
                    k.try_as_plain_ram()?
                        .as_slice::<TDim>()?
                        .iter()
                        .all(|l| l == time)
                }
            },
        };
        Ok(standard && self.clip.is_none() && !input_forget && direction && states && lens)
    }

    fn nboutputs(&self) -> usize {
        [self.slots.y, self.slots.y_h, self.slots.y_c]
            .iter()
            .filter(|s| s.is_some())
            .count()
    }

    /// The lengths of the run, checked against the time dim.
    fn lengths(
        &self,
        lens: Option<&TValue>,
        batch: usize,
        time: usize,
        symbols: &SymbolValues,
    ) -> TractResult<Vec<usize>> {
        let (op, node) = (self.op_type(), &self.node);
        let Some(lens) = lens else {
            return Ok(vec![time; batch]);
        };
        ensure!(
            lens.rank() == 1 && lens.len() == batch,
            "{op} node '{node}': sequence_lens has shape {:?}, expected [{batch}] (the batch)",
            lens.shape()
        );
        row_lengths(
            &format!("{op} node '{node}'"),
            lens,
            symbols,
            time,
            "seq_length",
        )
    }

    /// Checks that `t` has dims `want`, naming the input.
    fn check_shape(&self, t: &Tensor, input: &str, want: &[usize]) -> TractResult<()> {
        ensure!(
            t.shape() == want,
            "{} node '{}': {input} has shape {:?}, expected {want:?}",
            self.op_type(),
            self.node,
            t.shape()
        );
        Ok(())
    }

    /// A state input (`initial_h`, `initial_c`) as `[directions, batch,
    /// hidden]`, or zeros.
    fn state_input<T: RecurrentFloat>(
        &self,
        input: Option<&TValue>,
        name: &str,
        dirs: usize,
        batch: usize,
        hidden: usize,
    ) -> TractResult<Array3<T>> {
        let Some(t) = input else {
            return Ok(Array3::zeros((dirs, batch, hidden)));
        };
        if self.batch_first {
            self.check_shape(t, name, &[batch, dirs, hidden])?;
        } else {
            self.check_shape(t, name, &[dirs, batch, hidden])?;
        }
        let v = t.to_plain_array_view::<T>()?.into_dimensionality::<Ix3>()?;
        let v = if self.batch_first {
            v.permuted_axes([1, 0, 2])
        } else {
            v
        };
        Ok(v.to_owned())
    }

    fn run<T: RecurrentFloat>(
        &self,
        inputs: &[TValue],
        symbols: &SymbolValues,
    ) -> TractResult<TVec<TValue>> {
        let (op, node) = (self.op_type(), &self.node);
        let get = |slot: Option<usize>| slot.and_then(|s| inputs.get(s));
        let x = &inputs[0];
        ensure!(
            x.rank() == 3,
            "{op} node '{node}': X has shape {:?}, expected rank 3",
            x.shape()
        );
        let x = x.to_plain_array_view::<T>()?.into_dimensionality::<Ix3>()?;
        // Time-major from here on: [seq_length, batch, input_size].
        let x = if self.batch_first {
            x.permuted_axes([1, 0, 2])
        } else {
            x
        };
        let (time, batch, input_size) = x.dim();
        let dirs = self.direction.count();
        let gates = self.cell.gates();
        let r = &inputs[2];
        ensure!(
            r.rank() == 3 && r.shape()[1].is_multiple_of(gates),
            "{op} node '{node}': R has shape {:?}, expected [{dirs}, {gates}*hidden_size, hidden_size]",
            r.shape()
        );
        let hidden = r.shape()[2];
        let gh = gates * hidden;
        self.check_shape(r, "R", &[dirs, gh, hidden])?;
        self.check_shape(&inputs[1], "W", &[dirs, gh, input_size])?;
        let w = inputs[1]
            .to_plain_array_view::<T>()?
            .into_dimensionality::<Ix3>()?;
        let r = r.to_plain_array_view::<T>()?.into_dimensionality::<Ix3>()?;
        let bias = match get(self.slots.b) {
            Some(b) => {
                self.check_shape(b, "B", &[dirs, 2 * gh])?;
                b.to_plain_array_view::<T>()?
                    .into_dimensionality()?
                    .to_owned()
            }
            None => Array2::<T>::zeros((dirs, 2 * gh)),
        };
        let peepholes = match get(self.slots.p) {
            Some(p) => {
                self.check_shape(p, "P", &[dirs, 3 * hidden])?;
                p.to_plain_array_view::<T>()?
                    .into_dimensionality()?
                    .to_owned()
            }
            None => Array2::<T>::zeros((dirs, 3 * hidden)),
        };
        let h0 =
            self.state_input::<T>(get(self.slots.initial_h), "initial_h", dirs, batch, hidden)?;
        let c0 =
            self.state_input::<T>(get(self.slots.initial_c), "initial_c", dirs, batch, hidden)?;
        let lens = self.lengths(get(self.slots.sequence_lens), batch, time, symbols)?;

        let volume = |dims: &[usize]| {
            dims.iter()
                .try_fold(1usize, |v, &d| v.checked_mul(d))
                .with_context(|| format!("{op} node '{node}': output of dims {dims:?} overflows"))
        };
        volume(&[time, dirs, batch, hidden])?;
        volume(&[time, batch, gh])?;
        let mut y = Array3::<T>::zeros((time, dirs * batch, hidden));
        let mut y_h = Array3::<T>::zeros((dirs, batch, hidden));
        let mut y_c = Array3::<T>::zeros((dirs, batch, hidden));
        let x_rows = x.as_standard_layout();
        let x_rows = x_rows.to_shape((time * batch, input_size))?;
        let kernels = T::kernels()?;
        for d in 0..dirs {
            // Input-side products of every step at once, W-side bias in.
            let mut xw = x_rows.dot(&w.index_axis(Axis(0), d).t());
            xw += &bias.slice(s![d, ..gh]);
            let mut run = Direction1 {
                op: self,
                kernels: &kernels,
                activations: &self.activations[d],
                reversed: self.direction.reversed(d),
                r: r.index_axis(Axis(0), d),
                rb: bias.slice(s![d, gh..]),
                p: peepholes.row(d),
                xw,
                h: h0.index_axis(Axis(0), d).to_owned(),
                c: c0.index_axis(Axis(0), d).to_owned(),
                batch,
                hidden,
            };
            run.steps(&lens, |t, b, h| {
                y.slice_mut(s![t, d * batch + b, ..]).assign(&h);
            })?;
            for (b, &len) in lens.iter().enumerate() {
                if len > 0 {
                    y_h.slice_mut(s![d, b, ..]).assign(&run.h.row(b));
                    y_c.slice_mut(s![d, b, ..]).assign(&run.c.row(b));
                }
            }
        }
        let y = y.into_shape_with_order((time, dirs, batch, hidden))?;
        let mut outputs = tvec![];
        if self.slots.y.is_some() {
            let y = if self.batch_first {
                y.permuted_axes([2, 0, 1, 3])
            } else {
                y
            };
            outputs.push(
                y.as_standard_layout()
                    .into_owned()
                    .into_tensor()
                    .into_tvalue(),
            );
        }
        for (slot, state) in [(self.slots.y_h, y_h), (self.slots.y_c, y_c)] {
            if slot.is_some() {
                let state = if self.batch_first {
                    state.permuted_axes([1, 0, 2])
                } else {
                    state
                };
                outputs.push(
                    state
                        .as_standard_layout()
                        .into_owned()
                        .into_tensor()
                        .into_tvalue(),
                );
            }
        }
        Ok(outputs)
    }
}

/// The float types a [`Recurrent`] computes in, with tract's vectorized
/// kernels where tract has them (float32's Sigmoid and Tanh, and its GRU
/// cell).
pub(crate) trait RecurrentFloat: Datum + NdFloat {
    /// tract's Sigmoid and Tanh kernels, made once per run.
    type Kernels;
    /// The kernels.
    fn kernels() -> TractResult<Self::Kernels>;
    /// Applies `a` to `xs` with tract's kernel; false when there is none.
    fn apply_kernel(k: &Self::Kernels, a: Activation, xs: &mut [Self]) -> TractResult<bool>;
    /// tract's GRU cell (`linear_before_reset`, Sigmoid and Tanh) on `rows`
    /// rows; false when there is none.
    #[allow(clippy::too_many_arguments)]
    fn gru_cell(
        k: &Self::Kernels,
        hidden: usize,
        rows: usize,
        xh: &mut [Self],
        rh: &[Self],
        h_prev: &[Self],
        h_out: &mut [Self],
    ) -> TractResult<bool>;
}

type Ew32 = Box<dyn tract_hir::tract_core::tract_linalg::element_wise::ElementWise<f32>>;

impl RecurrentFloat for f32 {
    type Kernels = (Ew32, Ew32);

    fn kernels() -> TractResult<Self::Kernels> {
        use tract_hir::tract_core::tract_linalg::routines::Func;
        Ok((Func::Sigmoid.ew_f32()?, Func::Tanh.ew_f32()?))
    }

    fn apply_kernel(k: &Self::Kernels, a: Activation, xs: &mut [f32]) -> TractResult<bool> {
        match a {
            Activation::Sigmoid => k.0.run(xs)?,
            Activation::Tanh => k.1.run(xs)?,
            _ => return Ok(false),
        }
        Ok(true)
    }

    fn gru_cell(
        k: &Self::Kernels,
        hidden: usize,
        rows: usize,
        xh: &mut [f32],
        rh: &[f32],
        h_prev: &[f32],
        h_out: &mut [f32],
    ) -> TractResult<bool> {
        tract_hir::tract_core::ops::gru_cell::gru_cell_rows(
            hidden, rows, xh, rh, h_prev, h_out, &*k.0, &*k.1,
        )?;
        Ok(true)
    }
}

impl RecurrentFloat for f64 {
    type Kernels = ();

    fn kernels() -> TractResult<()> {
        Ok(())
    }

    fn apply_kernel(_: &(), _: Activation, _: &mut [f64]) -> TractResult<bool> {
        Ok(false)
    }

    fn gru_cell(
        _: &(),
        _: usize,
        _: usize,
        _: &mut [f64],
        _: &[f64],
        _: &[f64],
        _: &mut [f64],
    ) -> TractResult<bool> {
        Ok(false)
    }
}

/// `a`'s elements as one slice (every buffer of a step is in standard
/// layout).
fn flat<T>(a: &mut Array2<T>) -> TractResult<&mut [T]> {
    a.as_slice_mut().context("recurrent buffers are contiguous")
}

/// One direction of a run: the weights of the direction, the states of
/// every row.
struct Direction1<'a, T: RecurrentFloat> {
    op: &'a Recurrent,
    kernels: &'a T::Kernels,
    activations: &'a [Activation],
    reversed: bool,
    r: ArrayView2<'a, T>,
    rb: ArrayView1<'a, T>,
    p: ArrayView1<'a, T>,
    /// `X·Wᵀ + Wb`, `[seq_length * batch, gates * hidden]`, time-major.
    xw: Array2<T>,
    h: Array2<T>,
    c: Array2<T>,
    batch: usize,
    hidden: usize,
}

impl<T: RecurrentFloat> Direction1<'_, T> {
    /// Activation `i` of the direction on `xs`, their values clipped first.
    fn activate(&self, i: usize, xs: &mut [T]) -> TractResult<()> {
        if let Some(c) = self.op.clip {
            let c = <T as NumCast>::from(c).unwrap_or_else(T::infinity);
            xs.iter_mut().for_each(|x| *x = x.max(-c).min(c));
        }
        let a = self.activations[i];
        if !T::apply_kernel(self.kernels, a, xs)? {
            xs.iter_mut().for_each(|x| *x = a.apply(*x));
        }
        Ok(())
    }

    /// Whether tract's own GRU cell computes this direction's step.
    fn tract_gru_cell(&self) -> bool {
        self.op.cell
            == (Cell::Gru {
                linear_before_reset: true,
            })
            && self.op.clip.is_none()
            && self.activations == [Activation::Sigmoid, Activation::Tanh]
    }

    /// Runs step `k` of every row longer than `k` (rows step together, each
    /// from its own start), for `k` up to the longest; `emit(t, b, h)`
    /// receives row `b`'s state after its step at time `t`.
    fn steps(
        &mut self,
        lens: &[usize],
        mut emit: impl FnMut(usize, usize, ArrayView1<T>),
    ) -> TractResult<()> {
        let longest = lens.iter().copied().max().unwrap_or(0);
        let hidden = self.hidden;
        let gh = self.xw.ncols();
        let tract_gru = self.tract_gru_cell();
        for k in 0..longest {
            let rows: Vec<usize> = (0..lens.len()).filter(|&b| lens[b] > k).collect();
            let n = rows.len();
            let times: Vec<usize> = rows
                .iter()
                .map(|&b| if self.reversed { lens[b] - 1 - k } else { k })
                .collect();
            let h_prev = self.h.select(Axis(0), &rows);
            let c_prev = self.c.select(Axis(0), &rows);
            // The input-side products of each row at its own time.
            let mut g = Array2::<T>::zeros((n, gh));
            for (j, (&b, &t)) in rows.iter().zip(&times).enumerate() {
                g.row_mut(j).assign(&self.xw.row(t * self.batch + b));
            }
            let mut h_new = Array2::<T>::zeros((n, hidden));
            let mut c_new = Array2::<T>::zeros((n, hidden));
            match self.op.cell {
                Cell::Rnn => {
                    let hr = h_prev.dot(&self.r.t()) + self.rb;
                    g += &hr;
                    self.activate(0, flat(&mut g)?)?;
                    h_new = g;
                }
                Cell::Gru { .. } if tract_gru => {
                    let hr = h_prev.dot(&self.r.t()) + self.rb;
                    let hr = hr.as_standard_layout();
                    let h_prev = h_prev.as_standard_layout();
                    let done = T::gru_cell(
                        self.kernels,
                        hidden,
                        n,
                        flat(&mut g)?,
                        hr.as_slice().context("contiguous")?,
                        h_prev.as_slice().context("contiguous")?,
                        flat(&mut h_new)?,
                    )?;
                    if !done {
                        self.gru_step(&mut g, &h_prev.to_owned(), &mut h_new, true)?;
                    }
                }
                Cell::Gru {
                    linear_before_reset,
                } => {
                    self.gru_step(&mut g, &h_prev, &mut h_new, linear_before_reset)?;
                }
                Cell::Lstm { input_forget } => {
                    let hr = h_prev.dot(&self.r.t()) + self.rb;
                    g += &hr;
                    let p = |gate: usize| self.p.slice(s![gate * hidden..(gate + 1) * hidden]);
                    let gate = |g: &Array2<T>, i: usize| {
                        g.slice(s![.., i * hidden..(i + 1) * hidden]).to_owned()
                    };
                    // Gate order i, o, f, c; peepholes i, o, f.
                    let mut i = gate(&g, 0) + &c_prev * &p(0);
                    self.activate(0, flat(&mut i)?)?;
                    let f = if input_forget {
                        i.mapv(|i| T::one() - i)
                    } else {
                        let mut f = gate(&g, 2) + &c_prev * &p(2);
                        self.activate(0, flat(&mut f)?)?;
                        f
                    };
                    let mut cc = gate(&g, 3);
                    self.activate(1, flat(&mut cc)?)?;
                    c_new = &f * &c_prev + &i * &cc;
                    let mut o = gate(&g, 1) + &c_new * &p(1);
                    self.activate(0, flat(&mut o)?)?;
                    // h(Ct): no clip on the cell state.
                    let mut hc = c_new.clone();
                    let a = self.activations[2];
                    if !T::apply_kernel(self.kernels, a, flat(&mut hc)?)? {
                        hc.mapv_inplace(|x| a.apply(x));
                    }
                    h_new = &o * &hc;
                }
            }
            for (j, &b) in rows.iter().enumerate() {
                self.h.row_mut(b).assign(&h_new.row(j));
                self.c.row_mut(b).assign(&c_new.row(j));
                emit(times[j], b, h_new.row(j));
            }
        }
        Ok(())
    }

    /// A GRU step of `n` rows: `g` holds the input-side products (gates z,
    /// r, h), `h_prev` the states; the new states go to `h_new`.
    fn gru_step(
        &self,
        g: &mut Array2<T>,
        h_prev: &Array2<T>,
        h_new: &mut Array2<T>,
        linear_before_reset: bool,
    ) -> TractResult<()> {
        let hidden = self.hidden;
        let (r_zr, r_h) = (
            self.r.slice(s![..2 * hidden, ..]),
            self.r.slice(s![2 * hidden.., ..]),
        );
        let (rb_zr, rb_h) = (
            self.rb.slice(s![..2 * hidden]),
            self.rb.slice(s![2 * hidden..]),
        );
        let mut zr = g.slice(s![.., ..2 * hidden]).to_owned() + h_prev.dot(&r_zr.t()) + rb_zr;
        self.activate(0, flat(&mut zr)?)?;
        let (z, rg) = (zr.slice(s![.., ..hidden]), zr.slice(s![.., hidden..]));
        // rt ⊙ (Ht-1·Rhᵀ + Rbh), or (rt ⊙ Ht-1)·Rhᵀ + Rbh.
        let gated = if linear_before_reset {
            &rg * &(h_prev.dot(&r_h.t()) + rb_h)
        } else {
            (&rg * h_prev).dot(&r_h.t()) + rb_h
        };
        let mut hh = g.slice(s![.., 2 * hidden..]).to_owned() + &gated;
        self.activate(1, flat(&mut hh)?)?;
        // (1 - z) ⊙ hh + z ⊙ Ht-1, written as tract's cell writes it.
        *h_new = &hh + &(&z * &(h_prev - &hh));
        Ok(())
    }
}

// tract compares ops for equality; the floats here (clip, activation
// parameters) come from attributes, never NaN in a valid model.
impl Eq for Recurrent {}

impl Op for Recurrent {
    fn name(&self) -> StaticName {
        self.op_type().into()
    }

    fn info(&self) -> TractResult<Vec<String>> {
        Ok(vec![format!(
            "{:?}, layout {}, activations {:?}, clip {:?}, sequence_lens {}",
            self.direction,
            self.batch_first as usize,
            self.activations,
            self.clip,
            if self.slots.sequence_lens.is_some() {
                "at run time"
            } else {
                "none"
            }
        )])
    }

    op_as_typed_op!();
}

impl EvalOp for Recurrent {
    op_out_of_plan!();

    fn eval(&self, ctx: &EvalContext, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        match inputs[0].datum_type() {
            DatumType::F32 => self.run::<f32>(&inputs, ctx.symbols),
            DatumType::F64 => self.run::<f64>(&inputs, ctx.symbols),
            dt => bail!(
                "{} node '{}': X is {dt:?}; float32 and float64 are supported",
                self.op_type(),
                self.node
            ),
        }
    }
}

impl TypedOp for Recurrent {
    as_op!();

    fn output_facts(&self, inputs: &[&TypedFact]) -> TractResult<TVec<TypedFact>> {
        let (op, node) = (self.op_type(), &self.node);
        let x = inputs[0];
        ensure!(
            x.rank() == 3 && inputs[2].rank() == 3,
            "{op} node '{node}': X and R must have rank 3"
        );
        let dt = x.datum_type;
        ensure!(
            dt == DatumType::F32 || dt == DatumType::F64,
            "{op} node '{node}': X is {dt:?}; float32 and float64 are supported"
        );
        let dirs = self.direction.count().to_dim();
        let (time, batch) = if self.batch_first {
            (x.shape[1].clone(), x.shape[0].clone())
        } else {
            (x.shape[0].clone(), x.shape[1].clone())
        };
        let hidden = inputs[2].shape[2].clone();
        let mut facts = tvec![];
        if self.slots.y.is_some() {
            facts.push(if self.batch_first {
                dt.fact([batch.clone(), time, dirs.clone(), hidden.clone()])
            } else {
                dt.fact([time, dirs.clone(), batch.clone(), hidden.clone()])
            });
        }
        for _ in 0..(self.nboutputs() - self.slots.y.is_some() as usize) {
            facts.push(if self.batch_first {
                dt.fact([batch.clone(), dirs.clone(), hidden.clone()])
            } else {
                dt.fact([dirs.clone(), batch.clone(), hidden.clone()])
            });
        }
        Ok(facts)
    }
}

/// Stock's typing where stock's cell computes the node, [`Recurrent`]
/// elsewhere.
#[derive(Debug, Clone)]
pub(crate) struct RecurrentTyping(pub(crate) Recurrent);

impl Typing for RecurrentTyping {
    fn to_typed(
        &self,
        stock: &dyn InferenceOp,
        source: &InferenceModel,
        node: &InferenceNode,
        target: &mut TypedModel,
        mapping: &HashMap<OutletId, OutletId>,
    ) -> TractResult<TVec<OutletId>> {
        let inputs: TVec<OutletId> = node.inputs.iter().map(|i| mapping[i]).collect();
        let facts = inputs
            .iter()
            .map(|i| target.outlet_fact(*i).cloned())
            .collect::<TractResult<Vec<_>>>()?;
        if self.0.stock_computes(&facts)? {
            return stock.to_typed(source, node, target, mapping);
        }
        let w = &facts[1];
        let dirs = self.0.direction.count();
        ensure!(
            w.rank() == 3 && w.shape[0] == dirs.to_dim(),
            "{} node '{}': W has shape {:?}, expected {dirs} direction(s) for direction {:?}",
            self.0.op_type(),
            self.0.node,
            w.shape,
            self.0.direction
        );
        target.wire_node(&node.name, self.0.clone(), &inputs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(cell: Cell, direction: Direction, slots: Slots) -> Recurrent {
        let per = cell.default_activations().to_vec();
        Recurrent {
            node: "r".into(),
            cell,
            slots,
            batch_first: false,
            direction,
            activations: vec![per; direction.count()],
            clip: None,
        }
    }

    /// RNN of hidden size 1, input size 1, W = 1, R = 0: with Relu, each
    /// step's state is its input.
    fn identity_rnn(direction: Direction) -> Recurrent {
        let mut op = op(
            Cell::Rnn,
            direction,
            Slots {
                sequence_lens: Some(3),
                y: Some(0),
                y_h: Some(1),
                ..Slots::default()
            },
        );
        op.activations = vec![vec![Activation::Relu]; direction.count()];
        op
    }

    fn run(op: &Recurrent, x: Tensor, lens: &[i32]) -> TractResult<TVec<Tensor>> {
        let dirs = op.direction.count();
        let inputs = tvec![
            x.into_tvalue(),
            Tensor::from_shape(&[dirs, 1, 1], &vec![1f32; dirs])?.into_tvalue(),
            Tensor::from_shape(&[dirs, 1, 1], &vec![0f32; dirs])?.into_tvalue(),
            tensor1(lens).into_tvalue(),
        ];
        Ok(op
            .eval(&EvalContext::out_of_plan(), inputs)?
            .into_iter()
            .map(|t| t.into_tensor())
            .collect())
    }

    fn vals(t: &Tensor) -> Vec<f32> {
        t.try_as_plain_ram()
            .unwrap()
            .as_slice::<f32>()
            .unwrap()
            .to_vec()
    }

    fn steps(rows: &[[f32; 3]]) -> Tensor {
        // [time 3, batch, 1] from one row per batch entry.
        let mut v = vec![];
        for t in 0..3 {
            for row in rows {
                v.push(row[t]);
            }
        }
        Tensor::from_shape(&[3, rows.len(), 1], &v).unwrap()
    }

    #[test]
    fn each_row_runs_its_own_length_and_y_is_zero_past_it() {
        let out = run(
            &identity_rnn(Direction::Forward),
            steps(&[[1., 2., 3.], [4., 5., 6.]]),
            &[2, 3],
        )
        .unwrap();
        let y = vals(&out[0]);
        // [time, dirs, batch, 1]
        assert_eq!(y, vec![1., 4., 2., 5., 0., 6.]);
        assert_eq!(vals(&out[1]), &[2., 6.]);
    }

    #[test]
    fn the_reverse_direction_starts_at_each_row_s_last_step() {
        // Relu of x + h·R with R = 0 is x: Y_h is the first step's input.
        let out = run(
            &identity_rnn(Direction::Reverse),
            steps(&[[1., 2., 3.], [4., 5., 6.]]),
            &[2, 3],
        )
        .unwrap();
        assert_eq!(vals(&out[0]), &[1., 4., 2., 5., 0., 6.]);
        assert_eq!(vals(&out[1]), &[1., 4.]);
    }

    #[test]
    fn a_row_of_length_zero_has_zero_outputs_as_onnxruntime_gives() {
        let out = run(
            &identity_rnn(Direction::Bidirectional),
            steps(&[[1., 2., 3.]]),
            &[0],
        )
        .unwrap();
        assert!(vals(&out[0]).iter().all(|&v| v == 0.));
        assert_eq!(vals(&out[1]), &[0., 0.]);
    }

    #[test]
    fn a_length_outside_the_time_dim_names_the_node_the_row_the_length_and_the_bound() {
        let op = identity_rnn(Direction::Forward);
        let err = run(&op, steps(&[[1., 2., 3.], [4., 5., 6.]]), &[2, 4]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "RNN node 'r': sequence_lens[1] is 4, out of range [0, 3] (seq_length)"
        );
        let err = run(&op, steps(&[[1., 2., 3.], [4., 5., 6.]]), &[-1, 3]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "RNN node 'r': sequence_lens[0] is -1, out of range [0, 3] (seq_length)"
        );
    }

    #[test]
    fn activations_follow_onnx_formulas_with_their_parameters() {
        let cases = [
            (Activation::Affine(2., 1.), -1.5f64, -2.),
            (Activation::LeakyRelu(0.5), -2., -1.),
            (Activation::ThresholdedRelu(1.), 0.5, 0.),
            (Activation::ThresholdedRelu(1.), 1.5, 1.5),
            (Activation::ScaledTanh(2., 0.), 3., 0.),
            (Activation::HardSigmoid(0.2, 0.5), 10., 1.),
            (Activation::HardSigmoid(0.2, 0.5), 0., 0.5),
            (Activation::Elu(1.), 0., 0.),
            (Activation::Softsign, -1., -0.5),
            (Activation::Softplus, 0., std::f64::consts::LN_2),
            (Activation::Relu, -3., 0.),
        ];
        for (a, x, want) in cases {
            assert!(
                (a.apply(x) - want).abs() < 1e-12,
                "{a:?}({x}) = {}",
                a.apply(x)
            );
        }
    }

    #[test]
    fn activation_parameters_are_taken_in_order_by_those_that_use_them() {
        let mut alphas = [0.3f32, 2.0].into_iter();
        let mut betas = [0.7f32].into_iter();
        let names = ["LeakyRelu", "Tanh", "affine"];
        let parsed: Vec<_> = names
            .iter()
            .map(|n| Activation::parse("r", n, &mut alphas, &mut betas).unwrap())
            .collect();
        assert_eq!(
            parsed,
            [
                Activation::LeakyRelu(0.3),
                Activation::Tanh,
                Activation::Affine(2.0, 0.7)
            ]
        );
        let err = Activation::parse("r", "Swish", &mut alphas, &mut betas).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("node 'r': activation \"Swish\" is not one ONNX lists")
        );
    }
}
