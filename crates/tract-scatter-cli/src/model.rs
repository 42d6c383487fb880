//! Loading a model (plugin, strict or stock), binding `--set` symbols,
//! reading or making its inputs, and checking them against its facts.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use tract_onnx_scatter::tract_hir::infer::Factoid as _;
use tract_onnx_scatter::tract_onnx::pb::{GraphProto, ModelProto};
use tract_onnx_scatter::tract_onnx::prelude::*;

use crate::cli::{InputArgs, ModelArgs};
use crate::tensors;

/// Which tract loads the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// `tract_onnx_scatter::onnx()`.
    Plugin,
    /// `tract_onnx_scatter::onnx_strict()`.
    Strict,
    /// `tract_onnx::onnx()`.
    Stock,
}

impl Engine {
    /// How the engine is called, for reports.
    pub fn call(self) -> &'static str {
        match self {
            Engine::Plugin => "tract_onnx_scatter::onnx()",
            Engine::Strict => "tract_onnx_scatter::onnx_strict()",
            Engine::Stock => "stock tract_onnx::onnx()",
        }
    }

    /// Who does not implement an operator the engine lacks.
    pub fn lacking(self) -> &'static str {
        match self {
            Engine::Plugin | Engine::Strict => "neither tract nor the plugin implements",
            Engine::Stock => "stock tract does not implement",
        }
    }

    pub fn of(args: &ModelArgs) -> Engine {
        if args.strict {
            Engine::Strict
        } else {
            Engine::Plugin
        }
    }

    /// The model at `path` as this engine loads it. Stock tract reads no
    /// `value_info` with `ignore_value_info` (its symbols would contradict
    /// concrete input shapes); the plugin's loader reads it as hints.
    pub fn model_for_path(
        self,
        path: &Path,
        ignore_value_info: bool,
    ) -> TractResult<InferenceModel> {
        match self {
            Engine::Plugin => tract_onnx_scatter::onnx().model_for_path(path),
            Engine::Strict => tract_onnx_scatter::onnx_strict().model_for_path(path),
            Engine::Stock => tract_onnx_scatter::tract_onnx::onnx()
                .with_ignore_value_info(ignore_value_info)
                .model_for_path(path),
        }
    }
}

/// An operator the engine has no builder for, with the nodes using it.
pub struct Unsupported {
    pub op_type: String,
    /// Node names (the first output's name for a node without one), in
    /// graph order, subgraphs after the node holding them.
    pub nodes: Vec<String>,
}

/// The operators the model at `path` uses that `engine` does not
/// implement (no builder in its op register), in order of first use,
/// subgraphs included: every one at once, where typing the model stops at
/// the first. Nodes the graph's outputs do not need are left out (tract
/// never types them). The plugin's engines are asked about the model their loader
/// rewrites (`tract_onnx_scatter::load::prepare`), as they read it.
pub fn unsupported_ops(path: &Path, engine: Engine) -> Result<Vec<Unsupported>> {
    let plugin = tract_onnx_scatter::onnx();
    let stock = tract_onnx_scatter::tract_onnx::onnx();
    let register = match engine {
        Engine::Plugin | Engine::Strict => plugin.op_register(),
        Engine::Stock => &stock.op_register,
    };
    let proto = stock
        .proto_model_for_path(path)
        .with_context(|| format!("reading {} as an ONNX model", path.display()))?;
    let proto: Cow<'_, ModelProto> = match engine {
        Engine::Plugin | Engine::Strict => tract_onnx_scatter::load::prepare(Cow::Owned(proto))
            .with_context(|| format!("reading {}", path.display()))?,
        Engine::Stock => Cow::Owned(proto),
    };
    let mut found: Vec<Unsupported> = vec![];
    let mut index: HashMap<String, usize> = HashMap::new();
    if let Some(graph) = &proto.graph {
        walk_ops(graph, &register.0, &mut found, &mut index);
    }
    Ok(found)
}

/// The main graph's inputs and outputs whose ONNX type the plugin holds
/// in another tract type (bfloat16, complex), by name, as the model at
/// `path` declares them.
pub fn held_types(path: &Path) -> Result<HashMap<String, tensors::HeldType>> {
    let proto = tract_onnx_scatter::tract_onnx::onnx()
        .proto_model_for_path(path)
        .with_context(|| format!("reading {} as an ONNX model", path.display()))?;
    use tract_onnx_scatter::tract_onnx::pb::type_proto::Value;
    let graph = proto.graph.unwrap_or_default();
    Ok(graph
        .input
        .iter()
        .chain(&graph.output)
        .filter_map(|v| {
            let Value::TensorType(t) = v.r#type.as_ref()?.value.as_ref()?;
            Some((v.name.clone(), tensors::HeldType::of_onnx(t.elem_type)?))
        })
        .collect())
}

fn walk_ops<V>(
    graph: &GraphProto,
    register: &HashMap<String, V>,
    found: &mut Vec<Unsupported>,
    index: &mut HashMap<String, usize>,
) {
    // Nodes the graph's outputs need (ONNX lists nodes in topological
    // order): tract types only those, so an unused node stops nothing.
    let mut needed: HashSet<&str> = graph.output.iter().map(|o| o.name.as_str()).collect();
    let mut live = vec![false; graph.node.len()];
    for (ix, node) in graph.node.iter().enumerate().rev() {
        if node.output.iter().any(|o| needed.contains(o.as_str())) {
            live[ix] = true;
            needed.extend(node.input.iter().map(String::as_str));
            // What its subgraphs read from this scope (names of their own
            // included: harmless).
            let mut subgraphs: Vec<&GraphProto> = node
                .attribute
                .iter()
                .flat_map(|a| a.g.iter().chain(&a.graphs))
                .collect();
            while let Some(subgraph) = subgraphs.pop() {
                for inner in &subgraph.node {
                    needed.extend(inner.input.iter().map(String::as_str));
                    subgraphs.extend(
                        inner
                            .attribute
                            .iter()
                            .flat_map(|a| a.g.iter().chain(&a.graphs)),
                    );
                }
            }
        }
    }
    for (ix, node) in graph.node.iter().enumerate() {
        if !live[ix] {
            continue;
        }
        if !register.contains_key(&node.op_type) {
            // Named as tract names nodes.
            let name = if !node.name.is_empty() {
                node.name.clone()
            } else if node.output.first().is_some_and(|o| !o.is_empty()) {
                node.output[0].clone()
            } else {
                format!("#{ix} of graph {:?}", graph.name)
            };
            let at = *index.entry(node.op_type.clone()).or_insert_with(|| {
                found.push(Unsupported {
                    op_type: node.op_type.clone(),
                    nodes: vec![],
                });
                found.len() - 1
            });
            found[at].nodes.push(name);
        }
        for attribute in &node.attribute {
            for subgraph in attribute.g.iter().chain(&attribute.graphs) {
                walk_ops(subgraph, register, found, index);
            }
        }
    }
}

/// `Foo (3 nodes: n1, n2, n3), Bar (1 node: b1)`, at most five names each.
pub fn unsupported_text(ops: &[Unsupported]) -> String {
    const SHOWN: usize = 5;
    let op_text = |op: &Unsupported| {
        let n = op.nodes.len();
        let mut names = op.nodes[..n.min(SHOWN)].join(", ");
        if n > SHOWN {
            names.push_str(", ...");
        }
        format!(
            "{} ({n} node{}: {names})",
            op.op_type,
            if n == 1 { "" } else { "s" }
        )
    };
    ops.iter().map(op_text).collect::<Vec<_>>().join(", ")
}

/// The error of loading the model at `path`, naming the file and the
/// stage: a file that does not decode as protobuf is not an ONNX model;
/// other errors are the loader's, after `loading PATH`.
pub fn load_error(path: &Path, e: anyhow::Error) -> anyhow::Error {
    if e.chain().any(|cause| cause.is::<prost::DecodeError>()) {
        return anyhow::anyhow!(
            "{}: not an ONNX model: decoding it as an ONNX ModelProto (protobuf) failed: {}",
            path.display(),
            crate::one_line(&e)
        );
    }
    e.context(format!("loading {}", path.display()))
}

/// A decluttered model with its input and output names.
pub struct Loaded {
    pub typed: TypedModel,
    pub input_names: Vec<String>,
    pub output_names: Vec<String>,
    /// The `--set` values.
    pub values: SymbolValues,
    /// When some inputs are random (`--random`): which, the seed and the
    /// symbols' values, for the messages of a run that fails on them.
    pub random: Option<String>,
}

/// Loads `args.model` with `engine`, with `--set` symbols made concrete, and
/// `pinned` input tensors (by input index) fixing the facts of those inputs.
pub fn load(args: &ModelArgs, engine: Engine, pinned: Option<&[Tensor]>) -> Result<Loaded> {
    tensors::require_file(&args.model, "an .onnx model")?;
    let path = args.model.display().to_string();
    let mut model = engine
        .model_for_path(&args.model, !args.set.is_empty() || pinned.is_some())
        .map_err(|e| load_error(&args.model, e))?;

    let mut values = SymbolValues::default();
    for (name, n) in &args.set {
        let Some(sym) = model.symbols.get(name) else {
            let known: Vec<String> = model
                .symbols
                .all_symbols()
                .iter()
                .map(|s| s.to_string())
                .collect();
            bail!(
                "--set {name}={n}: {path} has no symbol {name:?} (its symbols: {})",
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            );
        };
        values.set(&sym, *n);
    }
    if let Some(inputs) = pinned {
        for (ix, t) in inputs.iter().enumerate() {
            model.set_input_fact(ix, InferenceFact::dt_shape(t.datum_type(), t.shape()))?;
        }
    } else if !args.set.is_empty() {
        for ix in 0..model.inputs.len() {
            let fact = model.input_fact(ix)?.clone();
            let (Some(dt), Some(shape)) = (fact.datum_type.concretize(), fact.shape.concretize())
            else {
                continue;
            };
            let shape: TVec<TDim> = shape.iter().map(|d| d.eval(&values)).collect();
            model.set_input_fact(ix, InferenceFact::dt_shape(dt, shape))?;
        }
    }
    // The ONNX names, read before typing: decluttering may fold nodes
    // into the inputs and outputs and relabel their outlets.
    let label = |o: &OutletId| {
        model
            .outlet_label(*o)
            .map(str::to_string)
            .unwrap_or_else(|| model.node(o.node).name.clone())
    };
    let input_names = input_names(&model)?;
    let output_names: Vec<String> = model.output_outlets()?.iter().map(label).collect();
    let typed = match model
        .into_typed()
        .and_then(|m| m.into_decluttered())
        .with_context(|| format!("typing {path}"))
    {
        Ok(typed) => typed,
        // Every operator the engine lacks, not only the one typing met.
        Err(e) => match unsupported_ops(&args.model, engine) {
            Ok(ops) if !ops.is_empty() => {
                return Err(e.context(format!(
                    "{path} uses {} operator(s) {}: {}",
                    ops.len(),
                    engine.lacking(),
                    unsupported_text(&ops)
                )));
            }
            _ => return Err(e),
        },
    };
    Ok(Loaded {
        typed,
        input_names,
        output_names,
        values,
        random: None,
    })
}

/// Reads the inputs the user named (files, `.npz`, data set), by model
/// input index; `None` for those not given.
pub fn given_inputs(args: &InputArgs, input_names: &[String]) -> Result<Vec<Option<Tensor>>> {
    let mut given: Vec<Option<Tensor>> = vec![None; input_names.len()];
    let position = |name: &str| -> Result<usize> {
        input_names.iter().position(|n| n == name).with_context(|| {
            format!(
                "the model has no input named {name:?} (its inputs: {})",
                input_names.join(", ")
            )
        })
    };
    if let Some(dir) = &args.data_set {
        let tensors = read_data_set(dir, "input")?;
        if tensors.is_empty() {
            bail!("{}", no_data_set(dir));
        }
        for (ix, t) in tensors.into_iter().enumerate() {
            if ix >= given.len() {
                bail!(
                    "{} has input_{ix}.pb but the model has only {} input(s)",
                    dir.display(),
                    given.len()
                );
            }
            given[ix] = Some(t);
        }
    }
    if let Some(npz) = &args.inputs {
        for (name, t) in tensors::read_npz(npz)? {
            let ix =
                position(&name).with_context(|| format!("array {name:?} of {}", npz.display()))?;
            given[ix] = Some(t);
        }
    }
    let named = args.input.iter().map(|spec| match spec.split_once('=') {
        Some((name, file)) => (Some(name.to_string()), PathBuf::from(file)),
        None => (None, PathBuf::from(spec)),
    });
    let positional = args.files.iter().map(|f| (None, f.clone()));
    let mut next = 0;
    for (name, file) in named.chain(positional) {
        let ix = match name {
            Some(name) => position(&name)?,
            None => {
                while next < given.len() && given[next].is_some() {
                    next += 1;
                }
                if next >= given.len() {
                    bail!(
                        "{}: one input file too many (the model has {} input(s): {})",
                        file.display(),
                        input_names.len(),
                        input_names.join(", ")
                    );
                }
                next
            }
        };
        given[ix] = Some(tensors::read_tensor(&file)?);
    }
    Ok(given)
}

/// Why `dir`, given as `--data-set`, is not a data set (it holds no
/// `input_0.pb`): what it holds, and the data set it holds if any (a node
/// test's directory, the natural mistake).
fn no_data_set(dir: &Path) -> String {
    let mut entries: Vec<(String, bool)> = std::fs::read_dir(dir)
        .map(|read| {
            read.filter_map(|e| e.ok())
                .map(|e| {
                    let is_dir = e.path().is_dir();
                    (e.file_name().to_string_lossy().into_owned(), is_dir)
                })
                .collect()
        })
        .unwrap_or_default();
    entries.sort();
    const SHOWN: usize = 6;
    let shown: Vec<String> = entries
        .iter()
        .take(SHOWN)
        .map(|(name, is_dir)| format!("{name}{}", if *is_dir { "/" } else { "" }))
        .collect();
    let holds = if entries.is_empty() {
        "it is empty".to_string()
    } else {
        format!(
            "it holds {}{}",
            shown.join(", "),
            if entries.len() > SHOWN { ", ..." } else { "" }
        )
    };
    let data_set = entries
        .iter()
        .find(|(name, is_dir)| *is_dir && name.starts_with("test_data_set_"))
        .map(|(name, _)| dir.join(name));
    match data_set {
        Some(data_set) => format!(
            "--data-set {}: no input_0.pb in it ({holds}): give the data set directory, --data-set {}",
            dir.display(),
            data_set.display()
        ),
        None => format!(
            "--data-set {}: no input_0.pb in it ({holds}): a data set directory holds input_<i>.pb files (a node test's test_data_set_N)",
            dir.display()
        ),
    }
}

/// `input_<i>.pb` (or `output_<i>.pb`) of a node-test data set, in order.
pub fn read_data_set(dir: &Path, prefix: &str) -> Result<Vec<Tensor>> {
    if !dir.is_dir() {
        bail!(
            "{}: no such directory (expected a test_data_set_N directory of input_i.pb/output_i.pb)",
            dir.display()
        );
    }
    let mut out = vec![];
    loop {
        let file = dir.join(format!("{prefix}_{}.pb", out.len()));
        if !file.is_file() {
            break;
        }
        out.push(tensors::read_tensor(&file)?);
    }
    Ok(out)
}

/// The inputs: the given ones, checked against the model's input facts;
/// the others are an error naming them, unless `random` (the seed) asks
/// for seeded random ones of the declared shapes (symbols neither `--set`
/// nor bound by a given input take 1). Random inputs are announced on
/// stderr with the seed and every symbol's value, and described in the
/// second value for the messages of a run that fails on them.
pub fn inputs(
    loaded: &Loaded,
    given: Vec<Option<Tensor>>,
    random: Option<u64>,
) -> Result<(TVec<TValue>, Option<String>)> {
    let mut bound = loaded.values.clone();
    let facts: Vec<TypedFact> = loaded
        .typed
        .input_outlets()?
        .iter()
        .map(|o| loaded.typed.outlet_fact(*o).cloned())
        .collect::<TractResult<_>>()?;
    // Check the given tensors first, so their sizes bind the symbols the
    // random ones then use.
    for ((name, fact), t) in loaded.input_names.iter().zip(&facts).zip(&given) {
        if let Some(t) = t {
            check_input(name, fact, t, &mut bound)?;
        }
    }
    let missing: Vec<String> = loaded
        .input_names
        .iter()
        .zip(&facts)
        .zip(&given)
        .filter(|(_, t)| t.is_none())
        .map(|((name, fact), _)| {
            format!("{name} ({:?} {})", fact.datum_type, shape_text(&fact.shape))
        })
        .collect();
    let Some(seed) = random.filter(|_| !missing.is_empty()) else {
        if !missing.is_empty() {
            bail!(
                "missing input(s): {} (the model has {} input(s): {}): give them as files, --input NAME=FILE, --inputs FILE.npz or --data-set DIR, or ask for random ones with --random",
                missing.join(", "),
                loaded.input_names.len(),
                loaded.input_names.join(", ")
            );
        }
        let inputs = given
            .into_iter()
            .flatten()
            .map(Tensor::into_tvalue)
            .collect();
        return Ok((inputs, None));
    };
    // Every symbol of the inputs' shapes takes a value before any tensor
    // is made, so the announcement lists them all.
    let mut symbols: Vec<Symbol> = vec![];
    for fact in &facts {
        for dim in fact.shape.iter() {
            for sym in dim.symbols() {
                if bound.get(&sym).is_none() {
                    bound.set(&sym, 1);
                }
                if !symbols.contains(&sym) {
                    symbols.push(sym);
                }
            }
        }
    }
    let index_bounds = index_bounds(&loaded.typed, &bound);
    let mut rng = tensors::Lcg::new(seed);
    let mut inputs = tvec![];
    for (ix, (fact, t)) in facts.iter().zip(given).enumerate() {
        let t = match t {
            Some(t) => t,
            None => {
                let shape: Vec<usize> = fact
                    .shape
                    .iter()
                    .map(|dim| {
                        let n = dim.eval(&bound).to_i64()?;
                        usize::try_from(n).with_context(|| {
                            format!(
                                "input {:?}: dim {dim} = {n} (a random input needs sizes >= 0: --set its symbols)",
                                loaded.input_names[ix]
                            )
                        })
                    })
                    .collect::<Result<_>>()?;
                tensors::random_tensor(
                    fact.datum_type,
                    &shape,
                    index_bounds.get(&ix).copied(),
                    &mut rng,
                )
                .with_context(|| format!("input {:?}", loaded.input_names[ix]))?
            }
        };
        inputs.push(t.into_tvalue());
    }
    // And those --set or a given input bound: every symbol with a value,
    // in the model's order.
    let ordered: Vec<Symbol> = loaded
        .typed
        .symbols
        .all_symbols()
        .into_iter()
        .filter(|s| bound.get(s).is_some())
        .collect();
    let unordered: Vec<Symbol> = symbols
        .into_iter()
        .filter(|s| !ordered.contains(s))
        .collect();
    let symbols: Vec<Symbol> = ordered.into_iter().chain(unordered).collect();
    let symbols = if symbols.is_empty() {
        "none".to_string()
    } else {
        symbols
            .iter()
            .map(|s| format!("{s}={}", bound.get(s).unwrap_or(1)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let names: Vec<&str> = missing
        .iter()
        .map(|m| m.split(" (").next().unwrap_or(m))
        .collect();
    let description = format!(
        "random inputs {} (--random, seed {seed}; symbols: {symbols})",
        names.join(", ")
    );
    eprintln!("{description}");
    Ok((inputs, Some(description)))
}

/// For the model's integer inputs that index another tensor where the
/// model says so (the indices of Gather, GatherElements and the plugin's
/// ScatterElements, fed straight from the input), the size of the axis
/// they index, by input index: random values then stay below it. Sizes
/// that stay symbolic, and other uses, give no bound.
fn index_bounds(model: &TypedModel, bound: &SymbolValues) -> HashMap<usize, i64> {
    use tract_onnx_scatter::tract_core::ops::array::{Gather, GatherElements};
    let inputs = model
        .input_outlets()
        .map(<[OutletId]>::to_vec)
        .unwrap_or_default();
    let mut bounds: HashMap<usize, i64> = HashMap::new();
    for node in model.nodes() {
        let axis = if let Some(op) = node.op_as::<Gather>() {
            Some(op.axis)
        } else if let Some(op) = node.op_as::<GatherElements>() {
            Some(op.axis)
        } else {
            node.op_as::<tract_onnx_scatter::ops::ScatterElements>()
                .map(|op| op.axis())
        };
        let (Some(axis), [data, indices, ..]) = (axis, &node.inputs[..]) else {
            continue;
        };
        let Some(ix) = inputs.iter().position(|o| o == indices) else {
            continue;
        };
        let Some(size) = model
            .outlet_fact(*data)
            .ok()
            .and_then(|f| f.shape.get(axis).cloned())
            .and_then(|d| d.eval(bound).to_i64().ok())
        else {
            continue;
        };
        let entry = bounds.entry(ix).or_insert(size);
        *entry = (*entry).min(size);
    }
    bounds
}

/// One line naming the input, what it got and what the model expects.
fn check_input(name: &str, fact: &TypedFact, t: &Tensor, bound: &mut SymbolValues) -> Result<()> {
    let expected = format!("{:?} {}", fact.datum_type, shape_text(&fact.shape));
    let got = format!("{:?} {:?}", t.datum_type(), t.shape());
    let same_type = fact.datum_type == t.datum_type()
        || (fact.datum_type.is_quantized() && fact.datum_type.unquantized() == t.datum_type());
    if !same_type {
        bail!("input {name:?}: got {got}, the model expects {expected} (wrong element type)");
    }
    if fact.rank() != t.rank() {
        bail!("input {name:?}: got {got}, the model expects {expected} (wrong rank)");
    }
    for (axis, (dim, &n)) in fact.shape.iter().zip(t.shape()).enumerate() {
        match dim.eval(bound).to_i64() {
            Ok(want) if want as usize != n => bail!(
                "input {name:?}: got {got}, the model expects {expected} (axis {axis} is {n}, expected {})",
                if dim.to_i64().is_ok() {
                    want.to_string()
                } else {
                    format!("{dim} = {want}")
                }
            ),
            Ok(_) => {}
            Err(_) => {
                // A lone symbol takes the size it is given.
                if let TDim::Sym(sym) = dim {
                    bound.set(sym, n as i64);
                }
            }
        }
    }
    Ok(())
}

/// The ONNX names of the model's inputs, in order.
fn input_names(model: &InferenceModel) -> Result<Vec<String>> {
    Ok(model
        .input_outlets()?
        .iter()
        .map(|o| model.node(o.node).name.clone())
        .collect())
}

pub fn shape_text(shape: &ShapeFact) -> String {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    format!("[{}]", dims.join(", "))
}

/// Everything `run`, `compare` and `bench` need: the optimized plan and
/// its inputs.
pub struct Prepared {
    pub loaded_names: (Vec<String>, Vec<String>),
    /// [`Loaded::random`].
    pub random: Option<String>,
    pub plan: std::sync::Arc<TypedSimplePlan>,
    pub inputs: TVec<TValue>,
}

/// Loads, reads the inputs, optimizes. `pinned`: type the model with the
/// given inputs' facts (every input must then be given).
pub fn prepare(model: &ModelArgs, input: &InputArgs) -> Result<Prepared> {
    let (loaded, inputs) = load_with_inputs(model, input, &[])?;
    optimize(loaded, inputs, &model.model)
}

/// The decluttered model and its inputs: the given ones, else the arrays
/// of `bundle` named after inputs, else random. With `--pinned` the model
/// is typed with the inputs' facts (every input must then be given).
pub fn load_with_inputs(
    model: &ModelArgs,
    input: &InputArgs,
    bundle: &[(String, Tensor)],
) -> Result<(Loaded, TVec<TValue>)> {
    // With --pinned the names come from the parsed graph, untyped: a model
    // whose declared facts do not type is what pinning is for. Otherwise
    // the declared load gives them.
    let (declared, names) = if input.pinned {
        tensors::require_file(&model.model, "an .onnx model")?;
        let parsed = Engine::of(model)
            .model_for_path(&model.model, true)
            .map_err(|e| load_error(&model.model, e))?;
        (None, input_names(&parsed)?)
    } else {
        let declared = load(model, Engine::of(model), None)?;
        let names = declared.input_names.clone();
        (Some(declared), names)
    };
    let mut given = given_inputs(input, &names)?;
    for (name, slot) in names.iter().zip(&mut given) {
        if slot.is_none() {
            *slot = bundle
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, t)| t.clone());
        }
    }
    let loaded = match declared {
        Some(declared) => declared,
        None => {
            let all: Option<Vec<Tensor>> = given.iter().cloned().collect();
            let Some(all) = all else {
                bail!(
                    "--pinned needs every input given (the model has {} input(s): {})",
                    names.len(),
                    names.join(", ")
                );
            };
            load(model, Engine::of(model), Some(&all))?
        }
    };
    let mut loaded = loaded;
    let random = (input.random || input.seed.is_some()).then(|| input.seed.unwrap_or(0));
    let (inputs, description) = inputs(&loaded, given, random)?;
    loaded.random = description;
    Ok((loaded, inputs))
}

/// The optimized plan of a loaded model, with its inputs.
pub fn optimize(loaded: Loaded, inputs: TVec<TValue>, model: &Path) -> Result<Prepared> {
    let path = model.display();
    let names = (loaded.input_names.clone(), loaded.output_names.clone());
    let random = loaded.random.clone();
    let plan = loaded
        .typed
        .into_optimized()
        .with_context(|| format!("optimizing {path}"))?
        .into_runnable()
        .with_context(|| format!("planning {path}"))?;
    Ok(Prepared {
        loaded_names: names,
        random,
        plan,
        inputs,
    })
}
