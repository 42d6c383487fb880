//! The ONNX front end: builders that validate a node against its opset, and
//! the inference-level ops they produce.

pub mod attributes;
pub mod scatter_elements;
pub mod scatter_elements_update;
pub mod scatter_nd;
pub mod tensor_scatter;
pub mod typing;

/// Overrides tract's builders with this crate's.
pub fn register(reg: &mut tract_onnx::model::OnnxOpRegister) {
    reg.insert("Scatter", scatter_elements::scatter);
    reg.insert("ScatterElements", scatter_elements::scatter_elements);
    reg.insert("ScatterND", scatter_nd::scatter_nd);
    reg.insert("TensorScatter", tensor_scatter::tensor_scatter);
    reg.insert(
        "ScatterElementsUpdate",
        scatter_elements_update::scatter_elements_update,
    );
}
