//! The ONNX front end: builders that validate a node against its opset, and
//! the inference-level ops they produce.

pub mod attributes;
pub mod deviation;
pub mod scatter_elements;
pub mod scatter_elements_update;
pub mod scatter_grad;
pub mod scatter_nd;
pub mod tensor_scatter;
pub mod typing;

pub use deviation::Deviations;

/// Overrides tract's builders with this crate's. `deviations` decides what
/// the builders do with known exporter deviations ([`deviation`]).
pub fn register(reg: &mut tract_onnx::model::OnnxOpRegister, deviations: Deviations) {
    // Builders are plain `fn`s: the mode is a const parameter.
    let strict = deviations == Deviations::Refuse;
    reg.insert(
        "Scatter",
        if strict {
            scatter_elements::scatter::<true>
        } else {
            scatter_elements::scatter::<false>
        },
    );
    reg.insert(
        "ScatterElements",
        if strict {
            scatter_elements::scatter_elements::<true>
        } else {
            scatter_elements::scatter_elements::<false>
        },
    );
    reg.insert(
        "ScatterND",
        if strict {
            scatter_nd::scatter_nd::<true>
        } else {
            scatter_nd::scatter_nd::<false>
        },
    );
    reg.insert("TensorScatter", tensor_scatter::tensor_scatter);
    reg.insert(
        "ScatterElementsUpdate",
        scatter_elements_update::scatter_elements_update,
    );
    // The training domain's ops: no opset versions, no deviations.
    reg.insert("ScatterElementsGrad", scatter_grad::scatter_elements_grad);
    reg.insert("ScatterNDGrad", scatter_grad::scatter_nd_grad);
}
