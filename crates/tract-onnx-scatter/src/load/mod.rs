//! The loader: tract's ONNX parser with the plugin's registry, behind a rewrite of what tract
//! cannot read as the exporter wrote it.
//!
//! [`Onnx`] is what [`crate::onnx()`] returns. It implements tract's [`Framework`] as
//! `tract_onnx::Onnx` does, so `model_for_path`, `model_for_read` and `model_for_proto_model`
//! work unchanged; before tract parses a model it [`prepare`]s it: first it refuses, with an
//! error naming the graph element, what tract's parser would panic on (`validate`); then
//! intermediate facts are read as hints (`hints`), a `Loop` that builds a list gets a scan
//! output (`loop_lists`), bfloat16 values are read as float32 (`bfloat16`) and complex values
//! as float pairs (`complex`). A model that needs none of it is parsed as it is, without a
//! copy. Contract: docs/contract.md, "The loader".
//!
//! **Architecture invariant:** the loader rewrites a model only where tract's reading of it
//! would stop or contradict the inputs' facts; what tract reads correctly reaches it byte for
//! byte.

pub(crate) mod bfloat16;
pub(crate) mod complex;
pub(crate) mod hints;
pub(crate) mod list_reads;
pub(crate) mod loop_lists;
pub(crate) mod round_to_bfloat16;
pub(crate) mod validate;

use std::borrow::Cow;
use std::path::Path;

use tract_hir::internal::*;
use tract_onnx::model::ParseResult;
use tract_onnx::pb::ModelProto;

/// `tract_onnx::Onnx` with the plugin's registry, and the loader's
/// rewrites before each parse (see the module documentation).
///
/// It is not a `tract_onnx::Onnx`, and nothing turns it into one without
/// saying so: no `Deref`, no `From`. A function written for tract's type
/// would load through tract's parser without the loader (a bfloat16 model
/// then fails with `Unknown DatumType Bfloat16`), so it does not compile:
///
/// ```compile_fail,E0308
/// use std::path::Path;
/// use tract_onnx_scatter::tract_onnx::prelude::*;
///
/// fn load(fw: &tract_onnx::Onnx, p: &Path) -> TractResult<InferenceModel> {
///     fw.model_for_path(p)
/// }
/// load(&tract_onnx_scatter::onnx(), Path::new("model.onnx"));
/// ```
///
/// nor does asking for tract's type by conversion:
///
/// ```compile_fail,E0277
/// let fw: tract_onnx_scatter::tract_onnx::Onnx = tract_onnx_scatter::onnx().into();
/// ```
///
/// Write the function generic over tract's [`Framework`] and it takes
/// either, each with its own loader:
///
/// ```no_run
/// use std::path::Path;
/// use tract_onnx_scatter::tract_onnx::pb::ModelProto;
/// use tract_onnx_scatter::tract_onnx::prelude::*;
///
/// fn load(
///     fw: &impl Framework<ModelProto, InferenceModel>,
///     p: &Path,
/// ) -> TractResult<InferenceModel> {
///     fw.model_for_path(p)
/// }
/// let path = Path::new("model.onnx");
/// let plugin = load(&tract_onnx_scatter::onnx(), path)?; // with the loader
/// let stock = load(&tract_onnx::onnx(), path)?; // tract's own
/// # Ok::<(), TractError>(())
/// ```
///
/// What callers reach on `tract_onnx::Onnx` is here as methods: the
/// `with_*` switches, [`parse`](Onnx::parse), the op register
/// ([`op_register`](Onnx::op_register) and
/// [`op_register_mut`](Onnx::op_register_mut), to add your own ops), the
/// [`Framework`] methods (`model_for_path`, `proto_model_for_path`, ...).
/// [`into_tract_without_loader`](Onnx::into_tract_without_loader) is the
/// one explicit way out.
#[derive(Clone)]
pub struct Onnx {
    tract: tract_onnx::Onnx,
}

impl Onnx {
    /// Wraps a tract ONNX framework (its registry as it is).
    pub fn new(tract: tract_onnx::Onnx) -> Onnx {
        Onnx { tract }
    }

    /// The tract framework inside, WITHOUT the loader: models it loads
    /// skip the rewrites and the validation of the module documentation
    /// (bfloat16 and complex models fail, `Loop`s building lists stop,
    /// `value_info` is read as facts, malformed models reach tract's
    /// parser). Only for code that needs tract's own type and the
    /// plugin's op register alone.
    pub fn into_tract_without_loader(self) -> tract_onnx::Onnx {
        self.tract
    }

    /// The op register: builders by ONNX op type (tract's, with the
    /// plugin's overrides).
    pub fn op_register(&self) -> &tract_onnx::model::OnnxOpRegister {
        &self.tract.op_register
    }

    /// The op register, to add or replace builders (your own ops); models
    /// still go through the loader.
    pub fn op_register_mut(&mut self) -> &mut tract_onnx::model::OnnxOpRegister {
        &mut self.tract.op_register
    }

    /// Whether output shapes declared by the model are read as facts
    /// (tract's `use_output_shapes`; see
    /// [`with_ignore_output_shapes`](Onnx::with_ignore_output_shapes)).
    pub fn use_output_shapes(&self) -> bool {
        self.tract.use_output_shapes
    }

    /// Whether output types declared by the model are ignored (tract's
    /// `ignore_output_types`).
    pub fn ignore_output_types(&self) -> bool {
        self.tract.ignore_output_types
    }

    /// Whether `value_info` is ignored (tract's `ignore_value_info`).
    pub fn ignore_value_info(&self) -> bool {
        self.tract.ignore_value_info
    }

    /// As setting `tract_onnx::Onnx::provider`: where external tensor
    /// data is read from.
    pub fn with_provider(
        mut self,
        provider: std::sync::Arc<dyn tract_onnx::data_resolver::ModelDataResolver + Send + Sync>,
    ) -> Onnx {
        self.tract.provider = provider;
        self
    }

    /// As `tract_onnx::Onnx::with_ignore_output_shapes`.
    pub fn with_ignore_output_shapes(self, ignore: bool) -> Onnx {
        Onnx::new(self.tract.with_ignore_output_shapes(ignore))
    }

    /// As `tract_onnx::Onnx::with_ignore_output_types`.
    pub fn with_ignore_output_types(self, ignore: bool) -> Onnx {
        Onnx::new(self.tract.with_ignore_output_types(ignore))
    }

    /// As `tract_onnx::Onnx::with_ignore_value_info`: `value_info` is not
    /// read at all.
    pub fn with_ignore_value_info(self, ignore: bool) -> Onnx {
        Onnx::new(self.tract.with_ignore_value_info(ignore))
    }

    /// As `tract_onnx::Onnx::parse`, after [`prepare`].
    pub fn parse(&self, proto: &ModelProto, model_dir: Option<&str>) -> TractResult<ParseResult> {
        self.parse_with_template(proto, model_dir, InferenceModel::default())
    }

    /// As `tract_onnx::Onnx::parse_with_template`, after [`prepare`].
    pub fn parse_with_template(
        &self,
        proto: &ModelProto,
        model_dir: Option<&str>,
        template: InferenceModel,
    ) -> TractResult<ParseResult> {
        let proto = prepare(Cow::Borrowed(proto))?;
        self.tract.parse_with_template(&proto, model_dir, template)
    }

    fn top_level(&self, proto: ModelProto, model_dir: Option<&str>) -> TractResult<InferenceModel> {
        let proto = prepare(Cow::Owned(proto))?;
        let ParseResult {
            model,
            unresolved_inputs,
            ..
        } = self
            .tract
            .parse_with_template(&proto, model_dir, InferenceModel::default())?;
        ensure!(
            unresolved_inputs.is_empty(),
            "Could not resolve inputs at top-level: {unresolved_inputs:?}"
        );
        Ok(model)
    }
}

impl Framework<ModelProto, InferenceModel> for Onnx {
    fn proto_model_for_read(&self, reader: &mut dyn std::io::Read) -> TractResult<ModelProto> {
        self.tract.proto_model_for_read(reader)
    }

    fn proto_model_for_path(&self, p: impl AsRef<Path>) -> TractResult<ModelProto> {
        self.tract.proto_model_for_path(p)
    }

    fn model_for_proto_model_with_model_template(
        &self,
        proto: &ModelProto,
        template: InferenceModel,
    ) -> TractResult<InferenceModel> {
        let ParseResult {
            model,
            unresolved_inputs,
            ..
        } = self.parse_with_template(proto, None, template)?;
        ensure!(
            unresolved_inputs.is_empty(),
            "Could not resolve inputs at top-level: {unresolved_inputs:?}"
        );
        Ok(model)
    }

    fn model_for_read(&self, r: &mut dyn std::io::Read) -> TractResult<InferenceModel> {
        let proto = self
            .proto_model_for_read(r)
            .context("Reading proto model")?;
        self.top_level(proto, None)
            .context("Translating proto model to model")
    }

    fn model_for_path(&self, p: impl AsRef<Path>) -> TractResult<InferenceModel> {
        let path = p.as_ref();
        let proto = self.proto_model_for_path(path)?;
        let dir = path.parent().and_then(|d| d.to_str());
        self.top_level(proto, dir)
    }
}

/// How the loader's errors name `node`: its name, else its first output
/// (exporters leave names empty).
fn node_label(node: &tract_onnx::pb::NodeProto) -> String {
    if node.name.is_empty() {
        node.output.first().cloned().unwrap_or_default()
    } else {
        node.name.clone()
    }
}

/// A scatter node's `reduction` attribute, `"none"` when absent.
fn reduction_attribute(node: &tract_onnx::pb::NodeProto) -> String {
    node.attribute
        .iter()
        .find(|a| a.name == "reduction")
        .map(|a| String::from_utf8_lossy(&a.s).into_owned())
        .unwrap_or_else(|| "none".into())
}

/// The model as tract should read it: an error for what tract's parser
/// would panic on (`validate`), else `model` itself when no rewrite
/// applies, else a rewritten copy (or `model`, rewritten, when owned).
/// Each rewrite logs what it changed.
pub fn prepare(model: Cow<'_, ModelProto>) -> TractResult<Cow<'_, ModelProto>> {
    let mut model = model;
    if bfloat16::holds_bfloat16(&model) {
        let rounding = bfloat16::widen(model.to_mut())?;
        log::info!("loader: bfloat16 read as float32, {rounding} rounding node(s) added");
    }
    if complex::holds_complex(&model) {
        let nodes = complex::widen(model.to_mut())?;
        log::info!("loader: complex read as float pairs, {nodes} node(s) rewritten");
    }
    validate::validate(&model)?;
    let soften = hints::needs_softening(&model);
    let lists = loop_lists::may_rewrite(&model);
    if !soften && !lists {
        return Ok(model);
    }
    let proto = model.to_mut();
    if lists {
        let n = loop_lists::rewrite(proto);
        if n > 0 {
            log::info!("loader: {n} list(s) built by a Loop read as scan outputs");
        }
    }
    if soften {
        let softened = hints::soften(proto);
        if !softened.other_symbols.is_empty() {
            log::info!(
                "loader: value_info names symbols no graph input declares ({}): read as unknown dims",
                softened
                    .other_symbols
                    .iter()
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        if !softened.is_empty() {
            log::debug!(
                "loader: intermediate facts read as hints: input symbols {:?} read as unknown dims, {} integer value_info types dropped",
                softened.input_symbols,
                softened.integer_types
            );
        }
    }
    Ok(model)
}
