//! NNEF serialization of this crate's typed ops, exposed the tract way.
//!
//! A model typed through [`crate::onnx()`] writes to an NNEF tar with
//! [`nnef()`] and reads back with it. The graph of such a tar carries
//! `extension tract_registry tract_onnx_scatter`: loading it with an `Nnef`
//! that lacks this registry fails with tract's
//! `Registry not found Identifier("tract_onnx_scatter")`; enable it with
//! [`WithScatter::with_scatter`] (or use [`nnef()`]).
//!
//! ```no_run
//! use tract_onnx_scatter::tract_onnx::prelude::*;
//! use tract_onnx_scatter::WithScatter;
//! use tract_onnx_scatter::tract_onnx_opl::WithOnnx;
//!
//! let model = tract_onnx_scatter::onnx().model_for_path("model.onnx")?.into_typed()?.into_decluttered()?;
//! let framework = tract_onnx_scatter::tract_nnef::nnef().with_onnx().with_scatter();
//! framework.write_to_tar(&model, std::fs::File::create("model.nnef.tar")?)?;
//! # Ok::<(), anyhow::Error>(())
//! ```

use tract_nnef::internal::*;

/// The id of this crate's NNEF registry, as `graph.nnef` names it in its
/// `extension tract_registry ...` line.
pub const REGISTRY_ID: &str = "tract_onnx_scatter";

/// Enables this crate's NNEF registry on a tract NNEF framework.
pub trait WithScatter {
    /// The framework with the `tract_onnx_scatter` registry enabled.
    fn with_scatter(self) -> Self;
    /// Enables the `tract_onnx_scatter` registry; a framework that already
    /// has it keeps it once.
    fn enable_scatter(&mut self);
}

impl WithScatter for tract_nnef::framework::Nnef {
    fn enable_scatter(&mut self) {
        if !self.registries.iter().any(|r| r.id.0 == REGISTRY_ID) {
            self.registries.push(registry());
        }
    }

    fn with_scatter(mut self) -> Self {
        self.enable_scatter();
        self
    }
}

/// `tract_nnef::nnef()` with tract's ONNX extensions and this crate's
/// registry enabled.
pub fn nnef() -> tract_nnef::framework::Nnef {
    use tract_onnx_opl::WithOnnx;
    tract_nnef::nnef().with_onnx().with_scatter()
}

/// The registry: the NNEF primitive, dumper and loader of every op home
/// that has an NNEF form ([`crate::ops::OpHome::register_nnef`]).
pub fn registry() -> Registry {
    let mut registry = Registry::new(REGISTRY_ID)
        .with_doc("Extension `tract_onnx_scatter` holds the ONNX scatter ops of the tract-onnx-scatter crate")
        .with_doc("(ScatterElements, Scatter, ScatterND, TensorScatter, ScatterElementsUpdate) with every")
        .with_doc("reduction and element type.")
        .with_doc("")
        .with_doc("Add `extension tract_registry tract_onnx_scatter` to `graph.nnef`, and enable it with")
        .with_doc("`tract_onnx_scatter::WithScatter::with_scatter` (or use `tract_onnx_scatter::nnef()`).");
    for register in crate::ops::HOMES
        .iter()
        .filter_map(|home| home.register_nnef)
    {
        register(&mut registry);
    }
    registry
}
